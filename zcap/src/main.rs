//! zcap: a tcpdump-like zero-copy sniffer (see the library, `zcap::main`, for what it is made of).

fn main() {
    std::process::exit(zcap::main());
}
