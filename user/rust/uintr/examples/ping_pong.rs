// SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note

//! Two threads interrupt each other in turn, a thousand times: each is a
//! receiver, hands the other a uintr_fd, connects to the other's and, in
//! each round, sleeps until the other's interrupt has arrived and answers
//! with its own. No `unsafe` anywhere.

#![forbid(unsafe_code)]

use std::io;
use std::sync::mpsc;
use std::thread;
use std::time::Instant;

use uintr::{Receiver, UintrFd, Vector};

const ROUNDS: u64 = 1000;

/// Sleeps until the handler took an interrupt after `seen`; returns the
/// new count.
fn next(r: &Receiver, seen: u64) -> io::Result<u64> {
    while r.arrivals().deliveries() == seen {
        r.wait_for_delivery(seen)?;
    }
    Ok(r.arrivals().deliveries())
}

fn main() -> io::Result<()> {
    if let Err(e) = uintr::supported() {
        eprintln!("no user interrupts here: {e}");
        return Err(e);
    }
    let (give_ping, take_ping) = mpsc::channel::<UintrFd>();
    let (give_pong, take_pong) = mpsc::channel::<UintrFd>();

    let ponger = thread::spawn(move || -> io::Result<()> {
        let r = Receiver::new()?;
        give_pong
            .send(r.create_fd(Vector::new(1).unwrap())?)
            .unwrap();
        let ping_fd = take_ping.recv().unwrap();
        let ping = ping_fd.connect()?;
        r.enable();
        let mut seen = 0;
        for _ in 0..ROUNDS {
            seen = next(&r, seen)?;
            ping.send();
        }
        Ok(())
    });

    let r = Receiver::new()?;
    give_ping
        .send(r.create_fd(Vector::new(0).unwrap())?)
        .unwrap();
    let pong_fd = take_pong.recv().unwrap();
    let pong = pong_fd.connect()?;
    r.enable();
    let start = Instant::now();
    let mut seen = 0;
    for _ in 0..ROUNDS {
        pong.send();
        seen = next(&r, seen)?;
    }
    let took = start.elapsed();
    ponger.join().unwrap()?;
    println!(
        "{ROUNDS} round trips between two threads in {took:?} ({:?} each), {} interrupts received",
        took / ROUNDS as u32,
        r.arrivals().count(Vector::new(0).unwrap())
    );
    Ok(())
}
