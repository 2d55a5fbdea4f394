//! Passing descriptors over a Unix socket (`SCM_RIGHTS`, through rustix): how the parent hands
//! a warm worker the pipes of one run.

use std::mem::MaybeUninit;
use std::os::fd::{BorrowedFd, OwnedFd};

use rustix::net::{
    recvmsg, sendmsg, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, ReturnFlags,
    SendAncillaryBuffer, SendAncillaryMessage, SendFlags,
};

/// At most this many descriptors per message.
const MAX_FDS: usize = 8;

/// Send `fds` (duplicated into the receiver; ours stay open) with a one-byte payload.
pub(crate) fn send(socket: BorrowedFd<'_>, fds: &[BorrowedFd<'_>]) -> std::io::Result<()> {
    if fds.is_empty() || fds.len() > MAX_FDS {
        return Err(std::io::Error::other(
            "between 1 and 8 descriptors per message",
        ));
    }
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(MAX_FDS))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    if !control.push(SendAncillaryMessage::ScmRights(fds)) {
        return Err(std::io::Error::other("no room for the descriptors"));
    }
    let payload = [0u8; 1];
    loop {
        match sendmsg(
            socket,
            &[std::io::IoSlice::new(&payload)],
            &mut control,
            SendFlags::NOSIGNAL,
        ) {
            Ok(_) => return Ok(()),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// Receive one message's descriptors (close-on-exec); `None` at end of stream.
pub(crate) fn receive(socket: BorrowedFd<'_>) -> std::io::Result<Option<Vec<OwnedFd>>> {
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(MAX_FDS))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let mut payload = [0u8; 1];
    let received = loop {
        match recvmsg(
            socket,
            &mut [std::io::IoSliceMut::new(&mut payload)],
            &mut control,
            RecvFlags::CMSG_CLOEXEC,
        ) {
            Ok(r) => break r,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    };
    let mut fds = Vec::new();
    for message in control.drain() {
        if let RecvAncillaryMessage::ScmRights(rights) = message {
            fds.extend(rights);
        }
    }
    if received.bytes == 0 && fds.is_empty() {
        return Ok(None);
    }
    if received.flags.contains(ReturnFlags::CTRUNC) {
        // Dropping `fds` closes what did arrive.
        return Err(std::io::Error::other("descriptors truncated"));
    }
    Ok(Some(fds))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::AsFd;

    #[test]
    fn descriptors_arrive_working_and_end_of_stream_is_none() {
        let (a, b) = rustix::net::socketpair(
            rustix::net::AddressFamily::UNIX,
            rustix::net::SocketType::SEQPACKET,
            rustix::net::SocketFlags::CLOEXEC,
            None,
        )
        .unwrap();
        let (read, write) = crate::run::sandbox::os_pipe().unwrap();
        send(a.as_fd(), &[write.as_fd(), read.as_fd()]).unwrap();
        drop(write);
        let mut got = receive(b.as_fd()).unwrap().unwrap();
        assert_eq!(got.len(), 2);
        got.pop();
        let mut w = std::fs::File::from(got.pop().unwrap());
        w.write_all(b"hi").unwrap();
        drop(w);
        let mut text = String::new();
        std::fs::File::from(read).read_to_string(&mut text).unwrap();
        assert_eq!(text, "hi");
        drop(a);
        assert!(receive(b.as_fd()).unwrap().is_none());
    }
}
