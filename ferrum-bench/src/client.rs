//! A small blocking RESP client for the live driver: one `std` TCP stream,
//! requests encoded straight into a write buffer, replies decoded with
//! ferrum-proto's [`RespCodec::client`].
//!
//! Blocking I/O keeps the driver's read-through loop a plain sequence of
//! request, reply, request: the driver never has more than one logical
//! request in flight, so an async runtime would add machinery without
//! adding speed. Commands can still be queued and flushed together when
//! their order is fixed (the driver pipelines its `DEBUG` clock commands
//! with the `GET` that follows them).

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use ferrum_proto::{Frame, Limits, ProtoError, RespCodec};
use tokio_util::codec::Decoder;

/// What can go wrong talking to a server.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The socket failed.
    #[error("i/o: {0}")]
    Io(#[from] io::Error),
    /// The server's bytes are not RESP.
    #[error("protocol: {0}")]
    Proto(#[from] ProtoError),
    /// The server closed the connection.
    #[error("connection closed by the server")]
    Closed,
    /// The server answered with an error reply.
    #[error("{0}")]
    Server(String),
    /// No node of the cluster serves the key's slot.
    #[error("no node of the cluster serves slot {0}")]
    SlotUnserved(u16),
    /// A cluster kept redirecting one command.
    #[error("{command} for slot {slot}: still redirected after {max} redirections, last to {last}", max = crate::cluster::MAX_REDIRECTS)]
    TooManyRedirects {
        /// The command's name.
        command: String,
        /// Its key's slot.
        slot: u16,
        /// Where the last redirection pointed.
        last: std::net::SocketAddr,
    },
    /// The reply has a shape the caller did not expect.
    #[error("unexpected reply to {command}: {reply}")]
    Unexpected {
        /// The command that was sent.
        command: String,
        /// The reply, debug-formatted.
        reply: String,
    },
}

/// A connection to a RESP server; see the module docs.
#[derive(Debug)]
pub struct Client {
    stream: TcpStream,
    codec: RespCodec,
    read_buf: BytesMut,
    write_buf: BytesMut,
}

impl Client {
    /// Connects, with `TCP_NODELAY` (requests are small and answered one at
    /// a time) and a generous read timeout so a stuck server is an error,
    /// not a hang.
    ///
    /// # Errors
    ///
    /// [`ClientError::Io`] if the connection cannot be made.
    pub fn connect(addr: impl ToSocketAddrs) -> Result<Client, ClientError> {
        let stream = TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_secs(120)))?;
        Ok(Client {
            stream,
            codec: RespCodec::client(Limits::default()),
            read_buf: BytesMut::with_capacity(16 * 1024),
            write_buf: BytesMut::with_capacity(4 * 1024),
        })
    }

    /// Encodes a command into the write buffer without sending it.
    pub fn queue<A: AsRef<[u8]>>(&mut self, args: &[A]) {
        let mut num = itoa::Buffer::new();
        self.write_buf.extend_from_slice(b"*");
        self.write_buf
            .extend_from_slice(num.format(args.len()).as_bytes());
        self.write_buf.extend_from_slice(b"\r\n");
        for arg in args {
            let arg = arg.as_ref();
            self.write_buf.extend_from_slice(b"$");
            self.write_buf
                .extend_from_slice(num.format(arg.len()).as_bytes());
            self.write_buf.extend_from_slice(b"\r\n");
            self.write_buf.extend_from_slice(arg);
            self.write_buf.extend_from_slice(b"\r\n");
        }
    }

    /// Sends everything queued in one write.
    ///
    /// # Errors
    ///
    /// [`ClientError::Io`] if the write fails.
    pub fn flush(&mut self) -> Result<(), ClientError> {
        if !self.write_buf.is_empty() {
            self.stream.write_all(&self.write_buf)?;
            self.write_buf.clear();
        }
        Ok(())
    }

    /// Reads the next reply, error replies included (as [`Frame::Error`]).
    ///
    /// # Errors
    ///
    /// I/O and protocol errors, and [`ClientError::Closed`] at end of stream.
    pub fn read(&mut self) -> Result<Frame, ClientError> {
        loop {
            if let Some(frame) = self.codec.decode(&mut self.read_buf)? {
                return Ok(frame);
            }
            let start = self.read_buf.len();
            self.read_buf.resize(start + 16 * 1024, 0);
            let n = self.stream.read(&mut self.read_buf[start..]);
            let n = match n {
                Ok(n) => n,
                Err(e) => {
                    self.read_buf.truncate(start);
                    return Err(e.into());
                }
            };
            self.read_buf.truncate(start + n);
            if n == 0 {
                return Err(ClientError::Closed);
            }
        }
    }

    /// Reads the next reply, turning an error reply into
    /// [`ClientError::Server`].
    ///
    /// # Errors
    ///
    /// As [`read`](Self::read), plus the server's own errors.
    pub fn read_ok(&mut self) -> Result<Frame, ClientError> {
        match self.read()? {
            Frame::Error(e) => Err(ClientError::Server(
                String::from_utf8_lossy(&e).into_owned(),
            )),
            frame => Ok(frame),
        }
    }

    /// Sends one command and reads its reply.
    ///
    /// # Errors
    ///
    /// As [`read_ok`](Self::read_ok), plus write errors.
    pub fn call<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Result<Frame, ClientError> {
        self.queue(args);
        self.flush()?;
        self.read_ok()
    }

    /// Sends a command whose reply is an integer (`DBSIZE`).
    ///
    /// # Errors
    ///
    /// As [`call`](Self::call), and [`ClientError::Unexpected`] for a
    /// non-integer reply.
    pub fn call_int<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Result<i64, ClientError> {
        match self.call(args)? {
            Frame::Integer(n) => Ok(n),
            reply => Err(unexpected(args, &reply)),
        }
    }

    /// `INFO section`, parsed into its `field:value` pairs.
    ///
    /// # Errors
    ///
    /// As [`call`](Self::call), and [`ClientError::Unexpected`] if the reply
    /// is not a string.
    pub fn info(&mut self, section: &str) -> Result<HashMap<String, String>, ClientError> {
        let args = ["INFO", section];
        let text: Bytes = match self.call(&args)? {
            Frame::Bulk(b) | Frame::Simple(b) => b,
            Frame::Verbatim { text, .. } => text,
            reply => return Err(unexpected(&args, &reply)),
        };
        Ok(parse_info(&String::from_utf8_lossy(&text)))
    }
}

/// The `field:value` lines of an `INFO` reply; section headers (`# Stats`)
/// and blank lines are skipped.
pub fn parse_info(text: &str) -> HashMap<String, String> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect()
}

fn unexpected<A: AsRef<[u8]>>(args: &[A], reply: &Frame) -> ClientError {
    let command = args
        .iter()
        .map(|a| String::from_utf8_lossy(a.as_ref()).into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    ClientError::Unexpected {
        command,
        reply: format!("{reply:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_lines_become_pairs() {
        let info = parse_info("# Stats\r\nkeyspace_hits:12\r\nkeyspace_misses:3\r\n\r\n");
        assert_eq!(info.len(), 2);
        assert_eq!(info["keyspace_hits"], "12");
        assert_eq!(info["keyspace_misses"], "3");
    }
}
