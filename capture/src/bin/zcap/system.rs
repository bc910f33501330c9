//! What zcap asks of the system besides packets: privilege drop and the interface list.

use anyhow::{anyhow, bail, Context, Result};

pub(crate) fn drop_privileges(user: &str) -> Result<()> {
    use nix::unistd::{setgroups, setresgid, setresuid, User};
    let u = User::from_name(user)
        .context("looking up the user")?
        .ok_or_else(|| anyhow!("-Z {user}: no such user"))?;
    setgroups(&[u.gid]).context("setgroups (needs root)")?;
    setresgid(u.gid, u.gid, u.gid).context("setresgid")?;
    setresuid(u.uid, u.uid, u.uid).context("setresuid")?;
    if nix::unistd::getuid() != u.uid
        || nix::unistd::geteuid() != u.uid
        || nix::unistd::setuid(nix::unistd::Uid::from_raw(0)).is_ok()
    {
        bail!("-Z {user}: privileges were not dropped");
    }
    eprintln!(
        "zcap: dropped privileges to {user} (uid {}, gid {})",
        u.uid, u.gid
    );
    Ok(())
}

pub(crate) fn list_interfaces() -> Result<()> {
    let mut ifs: Vec<(u32, String, u32)> = Vec::new();
    for e in std::fs::read_dir("/sys/class/net").context("reading /sys/class/net")? {
        let name = e?.file_name().to_string_lossy().into_owned();
        let read = |f: &str| {
            std::fs::read_to_string(format!("/sys/class/net/{name}/{f}")).unwrap_or_default()
        };
        let index = read("ifindex").trim().parse().unwrap_or(0);
        let flags =
            u32::from_str_radix(read("flags").trim().trim_start_matches("0x"), 16).unwrap_or(0);
        ifs.push((index, name, flags));
    }
    ifs.sort();
    for (i, (_, name, flags)) in ifs.iter().enumerate() {
        let mut f = Vec::new();
        if flags & 0x1 != 0 {
            f.push("Up");
        }
        if flags & 0x40 != 0 {
            f.push("Running");
        }
        if flags & 0x8 != 0 {
            f.push("Loopback");
        }
        println!("{}.{name} [{}]", i + 1, f.join(", "));
    }
    Ok(())
}
