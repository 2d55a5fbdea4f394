//! The last lock of a run's process: a seccomp filter that refuses new namespaces and mounts.
//!
//! Dropping capabilities is not enough on its own: an unprivileged process may still make a
//! user namespace (`unshare(CLONE_NEWUSER)`), become root inside it, and mount a tmpfs of its
//! own there, past the run's `--disk` cap and bounded only by the host's memory. Once the
//! sandbox has made every namespace and mount it needs, this filter refuses, with `EPERM`:
//! - `unshare`, `clone` with any namespace flag, and `setns`;
//! - every call that makes or moves a mount: `mount`, `umount2`, `pivot_root`, and the new
//!   mount API (`open_tree`, `move_mount`, `fsopen`, `fsconfig`, `fsmount`, `fspick`,
//!   `mount_setattr`);
//! - every call of a foreign ABI (32-bit `int 0x80`, x32), whose numbers differ.
//!
//! `clone3` passes its flags in memory a filter cannot read: it answers `ENOSYS`, so the C
//! library falls back to `clone` (threads and `posix_spawn` keep working). The filter is
//! inherited by every process the program starts and cannot be removed.

/// What refused a call answers.
const EPERM: u32 = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
const ENOSYS: u32 = libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32;

/// Every flag that makes a namespace (`CLONE_NEWTIME` shares its bit with `clone`'s exit
/// signal, which never reaches 0x80).
const NAMESPACE_FLAGS: u32 = (libc::CLONE_NEWNS
    | libc::CLONE_NEWCGROUP
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUSER
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNET
    | 0x80) as u32;

#[cfg(target_arch = "x86_64")]
const ARCH: Option<u32> = Some(0xC000_003E); // AUDIT_ARCH_X86_64
#[cfg(target_arch = "aarch64")]
const ARCH: Option<u32> = Some(0xC000_00B7); // AUDIT_ARCH_AARCH64
/// Elsewhere the filter is not installed, and every run says so.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const ARCH: Option<u32> = None;

/// Syscall numbers at or above this are x32's on x86_64 (none exist elsewhere).
const X32_BIT: u32 = 0x4000_0000;

/// Calls refused outright.
const REFUSED: &[libc::c_long] = &[
    libc::SYS_setns,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_open_tree,
    libc::SYS_move_mount,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
];

// Offsets into `struct seccomp_data`.
const NR: u32 = 0;
const ARCH_AT: u32 = 4;
/// The low 32 bits of the first argument (little-endian).
const ARG0_LOW: u32 = 16;

const LD_W_ABS: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
const JEQ: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
const JGE: u16 = (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16;
const JSET: u16 = (libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K) as u16;
const RET: u16 = (libc::BPF_RET | libc::BPF_K) as u16;

fn op(code: u16, jt: u8, jf: u8, k: u32) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

/// The filter's program; each jump skips only the instruction after it, or the short
/// flag check at the end.
fn program(arch: u32) -> Vec<libc::sock_filter> {
    let mut p = vec![
        op(LD_W_ABS, 0, 0, ARCH_AT),
        op(JEQ, 1, 0, arch),
        op(RET, 0, 0, EPERM),
        op(LD_W_ABS, 0, 0, NR),
        op(JGE, 0, 1, X32_BIT),
        op(RET, 0, 0, EPERM),
    ];
    for &nr in REFUSED {
        p.push(op(JEQ, 0, 1, nr as u32));
        p.push(op(RET, 0, 0, EPERM));
    }
    p.push(op(JEQ, 0, 1, libc::SYS_clone3 as u32));
    p.push(op(RET, 0, 0, ENOSYS));
    // unshare or clone: look at the flags; anything else is allowed.
    p.push(op(JEQ, 1, 0, libc::SYS_unshare as u32));
    p.push(op(JEQ, 0, 3, libc::SYS_clone as u32));
    p.push(op(LD_W_ABS, 0, 0, ARG0_LOW));
    p.push(op(JSET, 0, 1, NAMESPACE_FLAGS));
    p.push(op(RET, 0, 0, EPERM));
    p.push(op(RET, 0, 0, libc::SECCOMP_RET_ALLOW));
    p
}

/// Install the filter on this process (and so on everything it starts). Needs `no_new_privs`
/// set first, as an unprivileged process must.
pub fn refuse_namespaces_and_mounts() -> Result<(), std::io::Error> {
    let Some(arch) = ARCH else {
        return Err(std::io::Error::other(
            "no seccomp filter for this architecture (x86_64 and aarch64 only)",
        ));
    };
    let mut filter = program(arch);
    let prog = libc::sock_fprog {
        len: filter.len() as libc::c_ushort,
        filter: filter.as_mut_ptr(),
    };
    // SPEC_ALLOW: by default the kernel also turns on its speculative-store-bypass
    // mitigation for a filtered process, which costs a run about a millisecond (a fifth of a
    // warm run) and guards the program only against itself.
    const SET_MODE_FILTER: libc::c_ulong = 1;
    const FLAG_SPEC_ALLOW: libc::c_ulong = 1 << 2;
    // SAFETY: seccomp reads `prog` and the instructions it points to, both alive for the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            SET_MODE_FILTER,
            FLAG_SPEC_ALLOW,
            &prog as *const libc::sock_fprog,
        )
    };
    if r == 0 {
        return Ok(());
    }
    let err = std::io::Error::last_os_error();
    if err.raw_os_error() != Some(libc::EINVAL) {
        return Err(err);
    }
    // A kernel before 4.17 knows no such flag: the filter without it.
    // SAFETY: as above.
    let r = unsafe {
        libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER as libc::c_ulong,
            &prog as *const libc::sock_fprog as libc::c_ulong,
            0,
            0,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_jump_lands_inside_the_program() {
        let p = program(0xC000_003E);
        for (i, ins) in p.iter().enumerate() {
            if ins.code & 0x07 == libc::BPF_JMP as u16 {
                assert!(i + 1 + (ins.jt.max(ins.jf) as usize) < p.len(), "{i}");
            }
        }
        assert_eq!(p.last().map(|i| i.k), Some(libc::SECCOMP_RET_ALLOW));
    }
}
