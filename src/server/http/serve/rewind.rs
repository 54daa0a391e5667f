//! A connection whose first bytes were already read (to classify its first
//! request, see [`super::first_request`]), handed to hyper as if they had
//! not been.

use std::io::IoSlice;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// `inner`, with `prefix` read first.
pub struct Rewind<T> {
    prefix: Vec<u8>,
    taken: usize,
    inner: T,
}

impl<T> Rewind<T> {
    /// Reads `prefix`, then `inner`.
    pub fn new(prefix: Vec<u8>, inner: T) -> Self {
        Self {
            prefix,
            taken: 0,
            inner,
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Rewind<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        if this.taken < this.prefix.len() {
            let n = buf.remaining().min(this.prefix.len() - this.taken);
            buf.put_slice(&this.prefix[this.taken..this.taken + n]);
            this.taken += n;
            if this.taken == this.prefix.len() {
                // Give the buffer back as soon as it has been read.
                this.prefix = Vec::new();
                this.taken = 0;
            }
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Rewind<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn the_prefix_is_read_first_in_any_sized_reads_then_the_stream() {
        let (mut far, near) = tokio::io::duplex(64);
        far.write_all(b" world").await.unwrap();
        drop(far);
        let mut io = Rewind::new(b"hello".to_vec(), near);
        let mut first = [0u8; 3];
        io.read_exact(&mut first).await.unwrap();
        assert_eq!(&first, b"hel");
        let mut rest = String::new();
        io.read_to_string(&mut rest).await.unwrap();
        assert_eq!(rest, "lo world");
    }
}
