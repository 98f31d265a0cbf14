// SPDX-License-Identifier: GPL-2.0

//! The `uintr` crate's tests in the guest, run by `make check` on both CPUs
//! (QEMU, where the kernel emulates UINTR, and the Bochs model, where the
//! CPU has it). Prints TAP; each case runs in a process of its own (this
//! program again, with the case's name), so that a fault in one fails that
//! case only, and a receiver or sender table left by one cannot leak into
//! the next.
//!
//! No `unsafe` here: everything goes through the crate's safe API.

#![forbid(unsafe_code)]

use std::io::{self, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

use uintr::{EventFd, Events, Receiver, TimerFd, UintrFd, Vector};

type Outcome = Result<(), String>;

/// A case: its name (as TAP prints it) and its body.
type Case = (&'static str, fn() -> Outcome);

/// The cases, in order.
const CASES: &[Case] = &[
    ("rust_supported", supported),
    ("rust_handler_counts_each_self_interrupt", self_interrupts),
    (
        "rust_disabled_posts_coalesce_into_one_delivery",
        disabled_posts_coalesce,
    ),
    ("rust_take_pending_runs_no_handler", take_pending),
    ("rust_ping_pong_between_threads", ping_pong_threads),
    ("rust_ping_pong_between_processes", ping_pong_processes),
    ("rust_wait_timeout_expires_and_sees_pending", wait_timeout),
    (
        "rust_receiver_drop_leaves_connections_harmless",
        receiver_drop,
    ),
    ("rust_mask_stops_posts_until_unmask", mask_unmask),
    (
        "rust_shared_connection_sends_from_any_thread",
        shared_connection,
    ),
    ("rust_watched_eventfd_interrupts", watch_eventfd),
    ("rust_watched_timerfd_ticks", watch_timerfd),
    ("rust_alt_stack_delivery", alt_stack),
    ("rust_errors_carry_the_man_pages_errno", errors),
    (
        "rust_interrupted_code_keeps_its_registers",
        registers_survive,
    ),
];

/// The child end of the process ping-pong.
const PONG_CHILD: &str = "--pong-child";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some(PONG_CHILD) => exit(pong_child(&args[2])),
        Some(name) => match CASES.iter().find(|(n, _)| *n == name) {
            Some((_, case)) => exit(case()),
            None => {
                eprintln!("no case {name}");
                ExitCode::from(2)
            }
        },
        None => run_all(),
    }
}

fn exit(outcome: Outcome) -> ExitCode {
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("{why}");
            ExitCode::FAILURE
        }
    }
}

/// Runs every case in a child process and prints TAP.
fn run_all() -> ExitCode {
    let me = std::env::current_exe().expect("current_exe");
    println!("TAP version 13");
    println!("1..{}", CASES.len());
    let mut failed = 0;
    for (i, (name, _)) in CASES.iter().enumerate() {
        let out = Command::new(&me).arg(name).stdin(Stdio::null()).output();
        let (ok, text) = match out {
            Ok(o) => (
                o.status.success(),
                format!(
                    "{}{}{}",
                    String::from_utf8_lossy(&o.stdout),
                    String::from_utf8_lossy(&o.stderr),
                    if o.status.success() {
                        String::new()
                    } else {
                        format!("{}\n", o.status)
                    }
                ),
            ),
            Err(e) => (false, format!("cannot run: {e}\n")),
        };
        for line in text.lines() {
            println!("# {line}");
        }
        if ok {
            println!("ok {} {}", i + 1, name);
        } else {
            failed += 1;
            println!("not ok {} {}", i + 1, name);
        }
        let _ = io::stdout().flush();
    }
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn check(cond: bool, what: impl FnOnce() -> String) -> Outcome {
    if cond {
        Ok(())
    } else {
        Err(what())
    }
}

fn io_err(what: &str) -> impl FnOnce(io::Error) -> String + '_ {
    move |e| format!("{what}: {e}")
}

fn vector(n: u8) -> Vector {
    Vector::new(n).expect("vector below 64")
}

/// Spins (yielding) until `done`, or fails after `limit`.
fn until(limit: Duration, what: &str, mut done: impl FnMut() -> bool) -> Outcome {
    let start = Instant::now();
    while !done() {
        if start.elapsed() > limit {
            return Err(format!("timed out: {what}"));
        }
        thread::yield_now();
    }
    Ok(())
}

/// A generous limit: the model runs about ten times slower than the clock.
const PATIENCE: Duration = Duration::from_secs(30);

fn supported() -> Outcome {
    uintr::supported().map_err(io_err("supported()"))
}

fn self_interrupts() -> Outcome {
    let r = Receiver::new().map_err(io_err("register"))?;
    let v = vector(5);
    let me = r.connect_self(v).map_err(io_err("register_self"))?;
    r.enable();
    for n in 1..=3 {
        me.send();
        until(PATIENCE, "the self interrupt", || {
            r.arrivals().count(v) == n
        })?;
    }
    check(r.arrivals().deliveries() == 3, || {
        format!("{} deliveries, expected 3", r.arrivals().deliveries())
    })?;
    let taken = r.arrivals().take();
    check(taken.bits() == 1 << 5, || {
        format!("arrived {taken:?}, expected {{5}}")
    })
}

fn disabled_posts_coalesce() -> Outcome {
    let r = Receiver::new().map_err(io_err("register"))?;
    let v = vector(9);
    let me = r.connect_self(v).map_err(io_err("register_self"))?;
    r.enable();
    {
        let _off = r.disable();
        check(!r.is_enabled(), || {
            "delivery still enabled under the guard".into()
        })?;
        for _ in 0..5 {
            me.send();
        }
        let pending = r.pending().map_err(io_err("pending"))?;
        check(pending.contains(v), || {
            format!("pending {pending:?} lacks 9")
        })?;
        check(r.arrivals().deliveries() == 0, || {
            "delivered while disabled".into()
        })?;
    }
    check(r.is_enabled(), || {
        "the guard did not enable delivery again".into()
    })?;
    until(PATIENCE, "the coalesced delivery", || {
        r.arrivals().deliveries() >= 1
    })?;
    thread::sleep(Duration::from_millis(10));
    check(r.arrivals().count(v) == 1, || {
        format!(
            "{} deliveries of 5 coalesced posts, expected 1",
            r.arrivals().count(v)
        )
    })
}

fn take_pending() -> Outcome {
    let r = Receiver::new().map_err(io_err("register"))?;
    let (a, b) = (vector(3), vector(7));
    let to_a = r.connect_self(a).map_err(io_err("register_self 3"))?;
    let to_b = r.connect_self(b).map_err(io_err("register_self 7"))?;
    {
        let _off = r.disable();
        to_a.send();
        to_b.send();
        let taken = r.take_pending().map_err(io_err("take_pending"))?;
        check(taken.bits() == 1 << 3 | 1 << 7, || {
            format!("took {taken:?}, expected {{7, 3}}")
        })?;
        let left = r.pending().map_err(io_err("pending"))?;
        check(left.is_empty(), || {
            format!("{left:?} still pending after the take")
        })?;
    }
    r.enable();
    let again = r.wait_timeout(Duration::ZERO).map_err(io_err("wait"))?;
    check(!again && r.arrivals().deliveries() == 0, || {
        "a taken vector was delivered".into()
    })
}

/// Rounds of the ping-pongs (the model is slow).
const ROUNDS: u64 = 500;

/// One side of a ping-pong: `rounds` times, waits for an interrupt (if
/// `first_waits`) and answers through `peer`.
fn ping_pong(r: &Receiver, peer: &UintrFd, rounds: u64, first_waits: bool) -> Outcome {
    let to_peer = peer.connect().map_err(io_err("connect to the peer"))?;
    r.enable();
    let mut seen = 0;
    for round in 0..rounds {
        if first_waits || round > 0 {
            while r.arrivals().deliveries() == seen {
                r.wait_for_delivery(seen).map_err(io_err("wait"))?;
            }
            seen = r.arrivals().deliveries();
        }
        to_peer.send();
    }
    if !first_waits {
        while r.arrivals().deliveries() == seen {
            r.wait_for_delivery(seen).map_err(io_err("wait"))?;
        }
    }
    Ok(())
}

fn ping_pong_threads() -> Outcome {
    let (to_pinger, from_ponger) = mpsc::channel::<UintrFd>();
    let (to_ponger, from_pinger) = mpsc::channel::<UintrFd>();
    let ponger = thread::spawn(move || -> Outcome {
        let r = Receiver::new().map_err(io_err("register (pong)"))?;
        to_pinger
            .send(r.create_fd(vector(1)).map_err(io_err("create_fd"))?)
            .unwrap();
        let peer = from_pinger.recv().map_err(|e| e.to_string())?;
        ping_pong(&r, &peer, ROUNDS, true)
    });
    let r = Receiver::new().map_err(io_err("register (ping)"))?;
    to_ponger
        .send(r.create_fd(vector(2)).map_err(io_err("create_fd"))?)
        .unwrap();
    let peer = from_ponger.recv().map_err(|e| e.to_string())?;
    let start = Instant::now();
    ping_pong(&r, &peer, ROUNDS, false)?;
    println!("{ROUNDS} round trips in {:?}", start.elapsed());
    ponger
        .join()
        .map_err(|_| "the pong thread panicked".to_string())??;
    check(r.arrivals().count(vector(2)) == ROUNDS, || {
        format!(
            "{} pongs arrived, expected {ROUNDS}",
            r.arrivals().count(vector(2))
        )
    })
}

fn ping_pong_processes() -> Outcome {
    let path = std::env::temp_dir().join(format!("rust_uintr.{}.sock", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path).map_err(io_err("bind"))?;
    let mut child = Command::new(std::env::current_exe().map_err(io_err("current_exe"))?)
        .arg(PONG_CHILD)
        .arg(&path)
        .spawn()
        .map_err(io_err("spawn"))?;
    let result = (|| -> Outcome {
        let (sock, _) = listener.accept().map_err(io_err("accept"))?;
        let r = Receiver::new().map_err(io_err("register"))?;
        r.create_fd(vector(4))
            .map_err(io_err("create_fd"))?
            .send_over(&sock)
            .map_err(io_err("send the fd"))?;
        let peer = UintrFd::receive_over(&sock).map_err(io_err("receive the fd"))?;
        let start = Instant::now();
        ping_pong(&r, &peer, ROUNDS, false)?;
        println!(
            "{ROUNDS} round trips between processes in {:?}",
            start.elapsed()
        );
        Ok(())
    })();
    let status = child.wait().map_err(io_err("wait for the child"))?;
    let _ = std::fs::remove_file(&path);
    result?;
    check(status.success(), || format!("the pong process: {status}"))
}

fn pong_child(path: &str) -> Outcome {
    let sock = UnixStream::connect(path).map_err(io_err("connect"))?;
    let peer = UintrFd::receive_over(&sock).map_err(io_err("receive the fd"))?;
    let r = Receiver::new().map_err(io_err("register"))?;
    r.create_fd(vector(6))
        .map_err(io_err("create_fd"))?
        .send_over(&sock)
        .map_err(io_err("send the fd"))?;
    ping_pong(&r, &peer, ROUNDS, true)
}

fn wait_timeout() -> Outcome {
    let r = Receiver::new().map_err(io_err("register"))?;
    let start = Instant::now();
    let woke = r
        .wait_timeout(Duration::from_millis(20))
        .map_err(io_err("wait"))?;
    check(!woke, || "woke with nothing posted".into())?;
    check(start.elapsed() >= Duration::from_millis(20), || {
        format!("returned after {:?}, before the timeout", start.elapsed())
    })?;
    let me = r.connect_self(vector(0)).map_err(io_err("register_self"))?;
    me.send();
    let woke = r.wait_timeout(Duration::ZERO).map_err(io_err("wait"))?;
    check(woke, || {
        "a zero timeout missed the pending interrupt".into()
    })?;
    check(r.arrivals().deliveries() == 0, || {
        "delivered with delivery disabled".into()
    })
}

fn receiver_drop() -> Outcome {
    let (fd_tx, fd_rx) = mpsc::channel::<UintrFd>();
    let (step_tx, step_rx) = mpsc::channel::<()>();
    let (done_tx, done_rx) = mpsc::channel::<u64>();
    let receiver = thread::spawn(move || -> Outcome {
        let r = Receiver::new().map_err(io_err("register"))?;
        fd_tx
            .send(r.create_fd(vector(8)).map_err(io_err("create_fd"))?)
            .unwrap();
        r.enable();
        step_rx.recv().unwrap(); // the sender is connected and sent once
        until(PATIENCE, "the first send", || {
            r.arrivals().deliveries() == 1
        })?;
        drop(r);
        done_tx.send(1).unwrap();
        Ok(())
    });
    let fd = fd_rx.recv().map_err(|e| e.to_string())?;
    let conn = fd.connect().map_err(io_err("connect"))?;
    conn.send();
    step_tx.send(()).unwrap();
    done_rx.recv().map_err(|e| e.to_string())?;
    receiver
        .join()
        .map_err(|_| "the receiver panicked".to_string())??;
    // The receiver is gone: sends are harmless, new connections refused.
    for _ in 0..100 {
        conn.send();
    }
    let refused = thread::scope(|s| s.spawn(|| fd.connect().map(drop)).join().unwrap());
    match refused {
        Err(e) if e.raw_os_error() == Some(108) => Ok(()), // ESHUTDOWN
        Err(e) => Err(format!(
            "connect after the receiver's end: {e}, expected ESHUTDOWN"
        )),
        Ok(()) => Err("connected to a receiver that is gone".into()),
    }
}

fn mask_unmask() -> Outcome {
    let r = Receiver::new().map_err(io_err("register"))?;
    let v = vector(12);
    let fd = r.create_fd(v).map_err(io_err("create_fd"))?;
    let sender_fd = fd.try_clone().map_err(io_err("dup"))?;
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let (sent_tx, sent_rx) = mpsc::channel::<()>();
    let sender = thread::spawn(move || -> Outcome {
        let conn = sender_fd.connect().map_err(io_err("connect"))?;
        while go_rx.recv().is_ok() {
            conn.send();
            sent_tx.send(()).unwrap();
        }
        Ok(())
    });
    fd.mask().map_err(io_err("mask"))?;
    go_tx.send(()).unwrap();
    sent_rx.recv().unwrap();
    let pending = r.pending().map_err(io_err("pending"))?;
    check(pending.is_empty(), || {
        format!("{pending:?} pending through a masked vector")
    })?;
    fd.unmask().map_err(io_err("unmask"))?;
    go_tx.send(()).unwrap();
    sent_rx.recv().unwrap();
    drop(go_tx);
    sender
        .join()
        .map_err(|_| "the sender panicked".to_string())??;
    let pending = r.pending().map_err(io_err("pending"))?;
    check(pending.contains(v), || {
        format!("{pending:?} pending after the unmask, lacks 12")
    })
}

fn shared_connection() -> Outcome {
    let (fd_tx, fd_rx) = mpsc::channel::<(UintrFd, Arc<uintr::Arrivals>)>();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let receiver = thread::spawn(move || -> Outcome {
        let r = Receiver::new().map_err(io_err("register"))?;
        let fd = r.create_fd(vector(50)).map_err(io_err("create_fd"))?;
        fd_tx.send((fd, r.arrivals().clone())).unwrap();
        r.enable();
        // Running, so each post is delivered at once; until told to stop.
        while done_rx.try_recv().is_err() {
            thread::yield_now();
        }
        Ok(())
    });
    let (fd, arrivals) = fd_rx.recv().map_err(|e| e.to_string())?;
    let table = uintr::IpiFd::new().map_err(io_err("ipi_fd"))?;
    let conn = fd.connect_shared().map_err(io_err("connect_shared"))?;
    let outcome = thread::scope(|s| -> Outcome {
        for n in 1..=3 {
            // A thread that never connected: its first send puts it on
            // the shared table.
            s.spawn(|| conn.send()).join().unwrap();
            until(PATIENCE, "the delivery", || arrivals.deliveries() == n)?;
        }
        Ok(())
    });
    drop(conn);
    drop(table);
    done_tx.send(()).unwrap();
    receiver
        .join()
        .map_err(|_| "the receiver panicked".to_string())??;
    outcome
}

fn watch_eventfd() -> Outcome {
    let r = Receiver::new().map_err(io_err("register"))?;
    let v = vector(20);
    let fd = r.create_fd(v).map_err(io_err("create_fd"))?;
    let bell = EventFd::new().map_err(io_err("eventfd"))?;
    fd.watch(&bell, Events::IN).map_err(io_err("watch"))?;
    r.enable();
    let seen = r.arrivals().deliveries();
    let ringer = bell.try_clone().map_err(io_err("dup"))?;
    let t = thread::spawn(move || ringer.write(1));
    while r.arrivals().deliveries() == seen {
        r.wait_for_delivery(seen).map_err(io_err("wait"))?;
    }
    t.join().unwrap().map_err(io_err("write"))?;
    check(r.arrivals().count(v) == 1, || {
        format!("{} deliveries", r.arrivals().count(v))
    })?;
    check(bell.read().map_err(io_err("read"))? == 1, || {
        "the eventfd lost its count".into()
    })?;
    fd.unwatch(&bell).map_err(io_err("unwatch"))?;
    bell.write(1).map_err(io_err("write"))?;
    let woke = r
        .wait_timeout(Duration::from_millis(20))
        .map_err(io_err("wait"))?;
    check(!woke && r.arrivals().count(v) == 1, || {
        "an ended watch posted".into()
    })
}

fn watch_timerfd() -> Outcome {
    let r = Receiver::new().map_err(io_err("register"))?;
    let v = vector(33);
    let fd = r.create_fd(v).map_err(io_err("create_fd"))?;
    let timer = TimerFd::new().map_err(io_err("timerfd"))?;
    fd.watch(&timer, Events::IN).map_err(io_err("watch"))?;
    timer
        .set(Duration::from_millis(1), Duration::from_millis(1))
        .map_err(io_err("settime"))?;
    r.enable();
    let mut expirations = 0;
    while r.arrivals().count(v) < 5 {
        let seen = r.arrivals().deliveries();
        match timer.read() {
            Ok(n) => expirations += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                r.wait_for_delivery(seen).map_err(io_err("wait"))?
            }
            Err(e) => return Err(format!("read: {e}")),
        }
    }
    println!("5 tick interrupts, {expirations} expirations read");
    check(expirations >= 4, || {
        format!("{expirations} expirations for 5 ticks")
    })
}

fn alt_stack() -> Outcome {
    let r = Receiver::builder()
        .alt_stack(64 * 1024)
        .register()
        .map_err(io_err("register"))?;
    let me = r.connect_self(vector(2)).map_err(io_err("register_self"))?;
    r.enable();
    me.send();
    until(PATIENCE, "the delivery on the alternate stack", || {
        r.arrivals().deliveries() == 1
    })
}

fn errno_of(what: &str, r: io::Result<impl Sized>, want: i32, name: &str) -> Outcome {
    match r {
        Err(e) if e.raw_os_error() == Some(want) => Ok(()),
        Err(e) => Err(format!("{what}: {e}, expected {name}")),
        Ok(_) => Err(format!("{what} succeeded, expected {name}")),
    }
}

fn errors() -> Outcome {
    let r = Receiver::new().map_err(io_err("register"))?;
    errno_of(
        "a second receiver in one thread",
        Receiver::new(),
        16,
        "EBUSY",
    )?;
    let fd = r.create_fd(vector(1)).map_err(io_err("create_fd"))?;
    errno_of(
        "a second fd for one vector",
        r.create_fd(vector(1)),
        16,
        "EBUSY",
    )?;
    errno_of(
        "a self connection on a vector with an fd",
        r.connect_self(vector(1)),
        16,
        "EBUSY",
    )?;
    let other = r.create_fd(vector(2)).map_err(io_err("create_fd"))?;
    errno_of(
        "watching a uintr_fd",
        fd.watch(&other, Events::IN),
        1,
        "EPERM",
    )?;
    let bell = EventFd::new().map_err(io_err("eventfd"))?;
    errno_of(
        "unwatching a file never watched",
        fd.unwatch(&bell),
        2,
        "ENOENT",
    )?;
    fd.watch(&bell, Events::IN).map_err(io_err("watch"))?;
    errno_of(
        "watching a file twice",
        fd.watch(&bell, Events::IN),
        17,
        "EEXIST",
    )?;
    let conn = fd.connect().map_err(io_err("connect"))?;
    errno_of(
        "connecting twice in one thread",
        fd.connect().map(drop),
        106,
        "EISCONN",
    )?;
    drop(conn);
    let (pipe, _writer) = io::pipe().map_err(io_err("pipe"))?;
    let not_uintr = UintrFd::from(std::os::fd::OwnedFd::from(pipe));
    errno_of(
        "connecting to a pipe",
        not_uintr.connect().map(drop),
        95,
        "EOPNOTSUPP",
    )
}

/// The handler must give the interrupted code back every register, the
/// SSE/AVX state included: integer and floating-point work, checked
/// exactly, runs while another thread interrupts it hundreds of times.
fn registers_survive() -> Outcome {
    let r = Receiver::new().map_err(io_err("register"))?;
    let v = vector(40);
    let fd = r.create_fd(v).map_err(io_err("create_fd"))?;
    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let sender = {
        let (stop, sent) = (stop.clone(), sent.clone());
        thread::spawn(move || -> Outcome {
            let conn = fd.connect().map_err(io_err("connect"))?;
            while !stop.load(Ordering::Relaxed) {
                conn.send();
                sent.fetch_add(1, Ordering::Relaxed);
                thread::yield_now();
            }
            Ok(())
        })
    };
    // The answers, worked out before delivery is enabled.
    let expected: Vec<(u64, f64)> = (0..64).map(work).collect();
    r.enable();
    let mut rounds = 0u64;
    let start = Instant::now();
    let outcome = loop {
        let seed = rounds % 64;
        let (ints, floats) = work(std::hint::black_box(seed));
        let (want_ints, want_floats) = expected[seed as usize];
        if ints != want_ints || floats.to_bits() != want_floats.to_bits() {
            break Err(format!(
                "round {rounds}: got {ints:#x}/{floats}, expected {want_ints:#x}/{want_floats}"
            ));
        }
        rounds += 1;
        if r.arrivals().count(v) >= 500 || start.elapsed() > Duration::from_secs(10) {
            break Ok(());
        }
    };
    stop.store(true, Ordering::Relaxed);
    sender
        .join()
        .map_err(|_| "the sender panicked".to_string())??;
    println!(
        "{rounds} rounds of work, {} interrupts taken",
        r.arrivals().count(v)
    );
    outcome?;
    check(r.arrivals().count(v) >= 50, || {
        format!("only {} interrupts in 10 s", r.arrivals().count(v))
    })
}

/// Work that keeps many integer and vector registers live for a while.
#[inline(never)]
fn work(seed: u64) -> (u64, f64) {
    let mut x = [seed; 8];
    let mut f = [seed as f64; 8];
    for i in 0..2000u64 {
        for (k, (xi, fi)) in x.iter_mut().zip(f.iter_mut()).enumerate() {
            *xi = xi.rotate_left(7) ^ i.wrapping_mul(k as u64 + 3);
            *fi = *fi * 0.5 + (i as f64) * (k as f64 + 1.0);
        }
    }
    (x.iter().fold(0, |a, b| a ^ b), f.iter().sum())
}
