//! A client's byte stream, plain TCP or TLS over TCP, and the handshake that
//! turns an accepted socket into one.
//!
//! The connection loop and the accept loop are generic over these traits,
//! so each kind of stream gets its own monomorphised copy: the plain path
//! calls `TcpStream`'s methods directly, with no dynamic dispatch and no
//! branch on "is this TLS", and its handshake is a ready future.

use std::future::Future;
use std::io::{self, IoSlice};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::server::TlsStream;

use crate::tls::TlsContext;

/// What a connection reads requests from and writes replies to.
pub(crate) trait ClientStream: AsyncRead + AsyncWrite + Unpin + Send + 'static {
    /// Writes as much of `bufs` as the stream takes without waiting, like
    /// `TcpStream::try_write_vectored`: `Err(WouldBlock)` when it takes
    /// nothing now. Lets a connection skip building its `select!` when the
    /// kernel takes the whole batch, which is the common case. What it
    /// takes needs no flush; a stream that cannot say so (TLS) answers
    /// `WouldBlock`, and the caller writes asynchronously.
    fn write_now(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize>;

    /// Ends the stream politely before it is dropped (TLS sends its
    /// `close_notify`); bounded in time, errors ignored: the connection is
    /// over either way.
    fn close(&mut self) -> impl Future<Output = ()> + Send;
}

impl ClientStream for TcpStream {
    fn write_now(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        // One chunk, the common case: `send` costs the kernel less than
        // `writev` (measured: about a tenth of the CPU per request at
        // `redis-benchmark -P 16`).
        match bufs {
            [one] => self.try_write(one),
            _ => self.try_write_vectored(bufs),
        }
    }

    /// Dropping the socket closes it; nothing to say first.
    async fn close(&mut self) {}
}

/// Turns an accepted socket into a [`ClientStream`].
pub(crate) trait Handshake: Send + Sync + 'static {
    /// The stream it produces.
    type Stream: ClientStream;

    /// Starts the handshake of a socket just accepted. Called in the accept
    /// loop, so it must not wait: the work happens in the returned future,
    /// which the connection's own task awaits.
    fn start(
        &self,
        socket: TcpStream,
    ) -> impl Future<Output = io::Result<Self::Stream>> + Send + 'static;
}

/// The plain port: the socket is the stream.
pub(crate) struct Plain;

impl Handshake for Plain {
    type Stream = TcpStream;

    fn start(
        &self,
        socket: TcpStream,
    ) -> impl Future<Output = io::Result<TcpStream>> + Send + 'static {
        std::future::ready(Ok(socket))
    }
}

/// How long a client may take over its handshake. Its connection counts
/// against `maxclients` meanwhile, so one that never finishes must not
/// hold its place for ever.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a closing connection waits to send its `close_notify`.
const CLOSE_GRACE: Duration = Duration::from_secs(1);

/// The TLS port's [`Handshake`].
pub(crate) struct Tls(pub(crate) Arc<TlsContext>);

impl Handshake for Tls {
    type Stream = TlsStream<TcpStream>;

    fn start(
        &self,
        socket: TcpStream,
    ) -> impl std::future::Future<Output = io::Result<Self::Stream>> + Send + 'static {
        let acceptor = self.0.acceptor();
        async move {
            tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(socket))
                .await
                .unwrap_or_else(|_| Err(io::ErrorKind::TimedOut.into()))
        }
    }
}

impl ClientStream for TlsStream<TcpStream> {
    /// rustls encrypts into its own buffer and would need a flush to say
    /// what reached the socket, so replies always take the asynchronous
    /// write.
    fn write_now(&mut self, _bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        Err(io::ErrorKind::WouldBlock.into())
    }

    async fn close(&mut self) {
        let _ = tokio::time::timeout(CLOSE_GRACE, self.shutdown()).await;
    }
}
