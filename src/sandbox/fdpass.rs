//! Passing descriptors over a Unix socket (`SCM_RIGHTS`): how the parent hands a warm worker
//! the pipes of one run.

use std::os::fd::RawFd;

/// At most this many descriptors per message.
const MAX_FDS: usize = 8;

fn control_space() -> usize {
    // SAFETY: CMSG_SPACE is a pure size computation.
    unsafe { libc::CMSG_SPACE((MAX_FDS * std::mem::size_of::<RawFd>()) as u32) as usize }
}

/// Send `fds` (duplicated into the receiver; ours stay open) with a one-byte payload.
pub(crate) fn send(socket: RawFd, fds: &[RawFd]) -> std::io::Result<()> {
    if fds.is_empty() || fds.len() > MAX_FDS {
        return Err(std::io::Error::other(
            "between 1 and 8 descriptors per message",
        ));
    }
    let mut payload = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: payload.as_mut_ptr().cast(),
        iov_len: payload.len(),
    };
    // u64 keeps the buffer aligned for cmsghdr.
    let mut control = vec![0u64; control_space().div_ceil(8)];
    let bytes = std::mem::size_of_val(fds);
    // SAFETY: msghdr is plain data; every pointer below points into live buffers sized as
    // declared, and CMSG_* walk only the control buffer given.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = libc::CMSG_SPACE(bytes as u32) as usize;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if cmsg.is_null() {
            return Err(std::io::Error::other("no room for the descriptors"));
        }
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(bytes as u32) as usize;
        std::ptr::copy_nonoverlapping(fds.as_ptr().cast::<u8>(), libc::CMSG_DATA(cmsg), bytes);
        loop {
            let n = libc::sendmsg(socket, &msg, libc::MSG_NOSIGNAL);
            if n >= 0 {
                return Ok(());
            }
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::EINTR) {
                return Err(err);
            }
        }
    }
}

/// Receive one message's descriptors (close-on-exec); `None` at end of stream.
pub(crate) fn receive(socket: RawFd) -> std::io::Result<Option<Vec<RawFd>>> {
    let mut payload = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: payload.as_mut_ptr().cast(),
        iov_len: payload.len(),
    };
    let mut control = vec![0u64; control_space().div_ceil(8)];
    // SAFETY: as in `send`; the kernel writes at most msg_controllen bytes of control data.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = control.len() * 8;
        let n = libc::recvmsg(socket, &mut msg, libc::MSG_CMSG_CLOEXEC);
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut fds = Vec::new();
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(cmsg);
                let len = (*cmsg).cmsg_len as usize - libc::CMSG_LEN(0) as usize;
                for i in 0..len / std::mem::size_of::<RawFd>() {
                    let mut fd: RawFd = 0;
                    std::ptr::copy_nonoverlapping(
                        data.add(i * std::mem::size_of::<RawFd>()),
                        (&mut fd as *mut RawFd).cast::<u8>(),
                        std::mem::size_of::<RawFd>(),
                    );
                    fds.push(fd);
                }
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
        if n == 0 && fds.is_empty() {
            return Ok(None);
        }
        if msg.msg_flags & libc::MSG_CTRUNC != 0 {
            for fd in fds {
                libc::close(fd);
            }
            return Err(std::io::Error::other("descriptors truncated"));
        }
        Ok(Some(fds))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

    #[test]
    fn descriptors_arrive_working_and_end_of_stream_is_none() {
        let mut pair = [0; 2];
        // SAFETY: socketpair fills both descriptors.
        assert_eq!(
            unsafe {
                libc::socketpair(
                    libc::AF_UNIX,
                    libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
                    0,
                    pair.as_mut_ptr(),
                )
            },
            0
        );
        // SAFETY: fresh descriptors.
        let (a, b) = unsafe { (OwnedFd::from_raw_fd(pair[0]), OwnedFd::from_raw_fd(pair[1])) };
        let (read, write) = crate::sandbox::os_pipe().unwrap();
        send(a.as_raw_fd(), &[write.as_raw_fd(), read.as_raw_fd()]).unwrap();
        drop(write);
        let got = receive(b.as_raw_fd()).unwrap().unwrap();
        assert_eq!(got.len(), 2);
        // SAFETY: the received descriptors are ours now.
        let mut w = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(got[0]) });
        drop(unsafe { OwnedFd::from_raw_fd(got[1]) });
        w.write_all(b"hi").unwrap();
        drop(w);
        let mut text = String::new();
        std::fs::File::from(read).read_to_string(&mut text).unwrap();
        assert_eq!(text, "hi");
        drop(a);
        assert!(receive(b.as_raw_fd()).unwrap().is_none());
    }
}
