//! One client connection: read what is there, run every complete command,
//! write all the replies with one syscall, repeat.
//!
//! Batching is what makes pipelining fast: a `redis-benchmark -P 16` burst
//! arrives in one read and leaves in one write. The read buffer is bounded by
//! `client-query-buffer-limit`, and a client that stops reading simply stops
//! being read from (its task waits in `write_all`), so neither can grow the
//! server's memory without bound.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use ferrum_proto::{Frame, Limits, RespCodec};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_util::codec::{Decoder, Encoder};
use tokio_util::sync::CancellationToken;

use crate::client::{ClientHandle, ConnState};
use crate::cmd;
use crate::shared::Shared;

/// Replies are flushed early once this many bytes are pending, so one huge
/// pipeline cannot build an unbounded write buffer.
const FLUSH_THRESHOLD: usize = 64 * 1024;

/// Why a connection ended.
#[derive(Debug)]
pub(crate) enum Closed {
    /// The peer closed, sent QUIT, or was killed.
    Normally,
    /// A protocol error (already reported to the client).
    Protocol,
    /// Idle longer than `timeout`.
    Idle,
    /// The query buffer grew past `client-query-buffer-limit`.
    QueryBufferLimit,
    /// The socket failed.
    Io(std::io::Error),
}

/// Serves one accepted connection until it closes.
pub(crate) async fn serve(
    shared: Arc<Shared>,
    mut socket: TcpStream,
    handle: Arc<ClientHandle>,
    shutdown: CancellationToken,
) -> Closed {
    let (limits, idle_timeout, qbuf_limit) = {
        let c = shared.config();
        let limits = Limits {
            max_bulk_len: c.proto_max_bulk_len_bytes as usize,
            ..Limits::default()
        };
        let timeout = (!c.timeout.is_zero()).then_some(c.timeout);
        (limits, timeout, c.client_query_buffer_limit_bytes as usize)
    };
    let mut codec = RespCodec::server(limits);
    let mut rbuf = BytesMut::with_capacity(16 * 1024);
    let mut wbuf = BytesMut::with_capacity(16 * 1024);
    let mut conn = ConnState::new(handle.clone(), !shared.requires_auth());
    loop {
        let outcome = run_buffered(
            &shared,
            &mut conn,
            &mut codec,
            &mut rbuf,
            &mut wbuf,
            &mut socket,
        )
        .await;
        if !wbuf.is_empty() {
            shared
                .stats
                .net_output_bytes
                .fetch_add(wbuf.len() as u64, Ordering::Relaxed);
            if let Err(e) = socket.write_all(&wbuf).await {
                return Closed::Io(e);
            }
            wbuf.clear();
        }
        match outcome {
            Ok(()) if conn.closing => return Closed::Normally,
            Ok(()) => {}
            Err(closed) => return closed,
        }
        if rbuf.len() > qbuf_limit {
            return Closed::QueryBufferLimit;
        }
        if rbuf.capacity() - rbuf.len() < 4096 {
            rbuf.reserve(16 * 1024);
        }
        let read = async {
            match idle_timeout {
                Some(t) => tokio::time::timeout(t, socket.read_buf(&mut rbuf))
                    .await
                    .ok(),
                None => Some(socket.read_buf(&mut rbuf).await),
            }
        };
        tokio::select! {
            r = read => match r {
                None => return Closed::Idle,
                Some(Ok(0)) => return Closed::Normally,
                Some(Ok(n)) => {
                    shared.stats.net_input_bytes.fetch_add(n as u64, Ordering::Relaxed);
                }
                Some(Err(e)) => return Closed::Io(e),
            },
            () = handle.kill.notified() => return Closed::Normally,
            () = shutdown.cancelled() => return Closed::Normally,
        }
    }
}

/// Runs every complete command in `rbuf`, encoding replies into `wbuf`
/// (flushing early past [`FLUSH_THRESHOLD`]).
async fn run_buffered(
    shared: &Shared,
    conn: &mut ConnState,
    codec: &mut RespCodec,
    rbuf: &mut BytesMut,
    wbuf: &mut BytesMut,
    socket: &mut TcpStream,
) -> Result<(), Closed> {
    loop {
        let frame = match codec.decode(rbuf) {
            Ok(Some(frame)) => frame,
            Ok(None) => return Ok(()),
            Err(e) => {
                wbuf.extend_from_slice(b"-ERR ");
                wbuf.extend_from_slice(e.to_string().as_bytes());
                wbuf.extend_from_slice(b"\r\n");
                return Err(Closed::Protocol);
            }
        };
        let Some(args) = into_args(frame) else {
            continue;
        };
        let reply = cmd::execute(shared, conn, args);
        codec.set_protocol(conn.protocol);
        // Encoding into a BytesMut cannot fail.
        let _ = codec.encode(&reply, wbuf);
        if conn.closing {
            return Ok(());
        }
        if wbuf.len() >= FLUSH_THRESHOLD {
            shared
                .stats
                .net_output_bytes
                .fetch_add(wbuf.len() as u64, Ordering::Relaxed);
            socket.write_all(wbuf).await.map_err(Closed::Io)?;
            wbuf.clear();
        }
    }
}

/// A request frame's arguments. The server-side decoder only produces arrays
/// of bulk strings; anything else (or an empty array) is skipped.
fn into_args(frame: Frame) -> Option<Vec<Bytes>> {
    let Frame::Array(items) = frame else {
        return None;
    };
    let args: Vec<Bytes> = items
        .into_iter()
        .filter_map(|f| match f {
            Frame::Bulk(b) => Some(b),
            _ => None,
        })
        .collect();
    (!args.is_empty()).then_some(args)
}
