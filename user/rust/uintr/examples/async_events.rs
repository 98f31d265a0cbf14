// SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note

//! A tiny async executor whose reactor is the user interrupt handler, not
//! epoll: each file a task awaits (a timerfd, an eventfd) is watched on a
//! vector of the executor's thread, so the kernel interrupts the thread
//! when the file becomes ready; between interrupts the thread sleeps in
//! `uintr_wait()`. Two tasks run on it: one counts timer ticks, one adds
//! up what another thread writes to an eventfd. No `unsafe` anywhere.

#![forbid(unsafe_code)]

use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::thread;
use std::time::{Duration, Instant};

use uintr::{EventFd, Events, Receiver, TimerFd, Vector};

/// A file whose read returns a count, or `WouldBlock`.
trait Counter {
    fn read(&self) -> io::Result<u64>;
}

impl Counter for EventFd {
    fn read(&self) -> io::Result<u64> {
        EventFd::read(self)
    }
}

impl Counter for TimerFd {
    fn read(&self) -> io::Result<u64> {
        TimerFd::read(self)
    }
}

/// The wakers waiting for each vector.
#[derive(Default)]
struct Reactor {
    waiting: RefCell<HashMap<Vector, Vec<Waker>>>,
}

impl Reactor {
    fn wake(&self, v: Vector) {
        for w in self.waiting.borrow_mut().remove(&v).unwrap_or_default() {
            w.wake();
        }
    }
}

/// Reads `file` once it is ready: the future of one read.
struct Read<'a, F> {
    file: &'a F,
    vector: Vector,
    reactor: &'a Reactor,
}

impl<F: Counter> Future for Read<'_, F> {
    type Output = io::Result<u64>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        match self.file.read() {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                let mut waiting = self.reactor.waiting.borrow_mut();
                waiting
                    .entry(self.vector)
                    .or_default()
                    .push(cx.waker().clone());
                Poll::Pending
            }
            other => Poll::Ready(other),
        }
    }
}

/// The run queue: wakers push their task's number.
struct TaskWaker {
    id: usize,
    queue: Arc<Mutex<Vec<usize>>>,
}

impl Wake for TaskWaker {
    fn wake(self: Arc<Self>) {
        self.queue.lock().unwrap().push(self.id);
    }
}

type Task<'a> = Pin<Box<dyn Future<Output = io::Result<()>> + 'a>>;

/// Runs `tasks` to completion on this thread, sleeping in uintr_wait()
/// whenever none can run.
fn run(receiver: &Receiver, reactor: &Reactor, tasks: Vec<Task<'_>>) -> io::Result<u64> {
    let queue = Arc::new(Mutex::new((0..tasks.len()).collect::<Vec<_>>()));
    let mut tasks: Vec<Option<Task<'_>>> = tasks.into_iter().map(Some).collect();
    let mut sleeps = 0;
    while tasks.iter().any(Option::is_some) {
        let runnable = std::mem::take(&mut *queue.lock().unwrap());
        for id in runnable {
            let Some(task) = tasks[id].as_mut() else {
                continue;
            };
            let waker = Waker::from(Arc::new(TaskWaker {
                id,
                queue: queue.clone(),
            }));
            if let Poll::Ready(result) = task.as_mut().poll(&mut Context::from_waker(&waker)) {
                result?;
                tasks[id] = None;
            }
        }
        if !queue.lock().unwrap().is_empty() {
            continue;
        }
        // Sleep only if nothing arrived since `seen`: a delivery after it
        // changes the count and the wait returns at once.
        let seen = receiver.arrivals().deliveries();
        let mut arrived = receiver.arrivals().take();
        if arrived.is_empty() && tasks.iter().any(Option::is_some) {
            receiver.wait_for_delivery(seen)?;
            sleeps += 1;
            arrived = receiver.arrivals().take();
        }
        for v in arrived.iter() {
            reactor.wake(v);
        }
    }
    Ok(sleeps)
}

fn main() -> io::Result<()> {
    uintr::supported()?;
    let receiver = Receiver::new()?;
    let reactor = Reactor::default();

    let (tick, bell) = (Vector::new(10).unwrap(), Vector::new(11).unwrap());
    let tick_fd = receiver.create_fd(tick)?;
    let bell_fd = receiver.create_fd(bell)?;
    let timer = TimerFd::new()?;
    let doorbell = EventFd::new()?;
    tick_fd.watch(&timer, Events::IN)?;
    bell_fd.watch(&doorbell, Events::IN)?;
    receiver.enable();

    let ringer = doorbell.try_clone()?;
    let writer = thread::spawn(move || -> io::Result<()> {
        for n in 1..=5 {
            thread::sleep(Duration::from_millis(3));
            ringer.write(n)?;
        }
        Ok(())
    });

    let log = Rc::new(RefCell::new(Vec::new()));
    let (r, t, d) = (&reactor, &timer, &doorbell);
    let ticks_log = log.clone();
    let ticks: Task<'_> = Box::pin(async move {
        t.set(Duration::from_millis(2), Duration::from_millis(2))?;
        let mut expirations = 0;
        while expirations < 5 {
            expirations += Read {
                file: t,
                vector: tick,
                reactor: r,
            }
            .await?;
            ticks_log
                .borrow_mut()
                .push(format!("timer: {expirations} expirations"));
        }
        t.set(Duration::ZERO, Duration::ZERO)
    });
    let sum_log = log.clone();
    let sum: Task<'_> = Box::pin(async move {
        let mut sum = 0;
        while sum < 15 {
            let got = Read {
                file: d,
                vector: bell,
                reactor: r,
            }
            .await?;
            sum += got;
            sum_log
                .borrow_mut()
                .push(format!("eventfd: read {got}, sum {sum}"));
        }
        Ok(())
    });

    let start = Instant::now();
    let sleeps = run(&receiver, &reactor, vec![ticks, sum])?;
    writer.join().unwrap()?;
    for line in log.borrow().iter() {
        println!("{line}");
    }
    println!(
        "both tasks done in {:?}: {sleeps} sleeps in uintr_wait(), {} user interrupts \
         (timer {}, eventfd {})",
        start.elapsed(),
        receiver.arrivals().deliveries(),
        receiver.arrivals().count(tick),
        receiver.arrivals().count(bell)
    );
    Ok(())
}
