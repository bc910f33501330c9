#!/usr/bin/env bash
# Installs what zcrx needs on a Debian machine, only what is missing. Run as root.
set -euo pipefail

need_apt=()
command -v ip >/dev/null 2>&1 || need_apt+=(iproute2)
command -v cc >/dev/null 2>&1 || need_apt+=(gcc)
command -v pkg-config >/dev/null 2>&1 || need_apt+=(pkg-config)
# zcap's `kafka` feature builds librdkafka from source (rdkafka-sys): make, OpenSSL's headers.
command -v make >/dev/null 2>&1 || need_apt+=(make)
pkg-config --exists openssl 2>/dev/null || need_apt+=(libssl-dev)
# zcap compiles filters with libpcap; its tests read zcap's files with tcpdump and tshark.
pkg-config --exists libpcap 2>/dev/null || need_apt+=(libpcap-dev)
command -v tcpdump >/dev/null 2>&1 || need_apt+=(tcpdump)
command -v tshark >/dev/null 2>&1 || need_apt+=(tshark)
# zcap's IPFIX export is tested against a real collector: nfdump's nfcapd.
command -v nfcapd >/dev/null 2>&1 || need_apt+=(nfdump)
# zcap's man page is rendered by man (man-db), its completions loaded by bash, zsh and fish.
command -v man >/dev/null 2>&1 || need_apt+=(man-db)
command -v zsh >/dev/null 2>&1 || need_apt+=(zsh)
command -v fish >/dev/null 2>&1 || need_apt+=(fish)
# zcap's live status line is tested in a real terminal: tmux.
command -v tmux >/dev/null 2>&1 || need_apt+=(tmux)
# scripts/top-cost.sh floods the lab with hping3 while zcap --top runs in tmux.
command -v hping3 >/dev/null 2>&1 || need_apt+=(hping3)
command -v python3 >/dev/null 2>&1 || need_apt+=(python3) # the soak's traffic and collector
# zcap's compressed files are read back by the compressors' own tools (zcat, zstdcat, lz4cat).
command -v gzip >/dev/null 2>&1 || need_apt+=(gzip)
command -v zstd >/dev/null 2>&1 || need_apt+=(zstd)
# PCAP-over-IP is tested with nc piped into tcpdump, and over TLS with openssl s_client (the
# openssl command also makes the tests' certificates); --metrics over TLS with curl.
command -v nc >/dev/null 2>&1 || need_apt+=(netcat-openbsd)
command -v openssl >/dev/null 2>&1 || need_apt+=(openssl)
command -v curl >/dev/null 2>&1 || need_apt+=(curl)
command -v lz4 >/dev/null 2>&1 || need_apt+=(lz4)
# zcap --metrics is scraped by a real Prometheus server and checked by promtool.
command -v prometheus >/dev/null 2>&1 || need_apt+=(prometheus)
command -v promtool >/dev/null 2>&1 || need_apt+=(prometheus)
# Flows from two zcap sensors go through pmacct's nfacctd into PostgreSQL.
command -v nfacctd >/dev/null 2>&1 || need_apt+=(pmacct)
[ -x /usr/lib/postgresql/15/bin/initdb ] || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need_apt+=(postgresql)
# zcap's least-privilege tests: file capabilities (setcap) and ambient ones (setpriv); its
# service unit is checked by systemd-analyze.
command -v setcap >/dev/null 2>&1 || need_apt+=(libcap2-bin)
command -v setpriv >/dev/null 2>&1 || need_apt+=(util-linux)
command -v systemd-analyze >/dev/null 2>&1 || need_apt+=(systemd)
# flowcache's names oracle test (feature names): dig queries a DNS responder over UDP and TCP,
# ethtool turns a lab veth's offloads off so a small MSS splits ClientHellos into segments.
command -v dig >/dev/null 2>&1 || need_apt+=(bind9-dnsutils)
command -v ethtool >/dev/null 2>&1 || need_apt+=(ethtool)
command -v ss >/dev/null 2>&1 || need_apt+=(iproute2)
python3 -m pip --version >/dev/null 2>&1 || need_apt+=(python3-pip)
# zcap's tcpdump_lines test compares zcap's lines with tcpdump's on a capture of real
# programs' traffic (zcrx_ring::lab::everyday): a server and a client per protocol, the
# servers started in a lab namespace with their own configuration (none runs system-wide).
lab_daemons=()
command -v nginx >/dev/null 2>&1 || { need_apt+=(nginx); lab_daemons+=(nginx); }       # HTTP
command -v sshd >/dev/null 2>&1 || { need_apt+=(openssh-server); lab_daemons+=(ssh); } # SSH
command -v ssh >/dev/null 2>&1 || need_apt+=(openssh-client)                          # SSH
command -v ssh-keygen >/dev/null 2>&1 || need_apt+=(openssh-client)                   # SSH key
command -v vsftpd >/dev/null 2>&1 || { need_apt+=(vsftpd); lab_daemons+=(vsftpd); }    # FTP
command -v postfix >/dev/null 2>&1 || { need_apt+=(postfix); lab_daemons+=(postfix); } # SMTP
command -v dovecot >/dev/null 2>&1 || { need_apt+=(dovecot-pop3d); lab_daemons+=(dovecot); } # POP3
# dnsmasq (the binary alone, no system service) is the lab's DNS resolver and DHCP server;
# dhclient its DHCP client.
command -v dnsmasq >/dev/null 2>&1 || need_apt+=(dnsmasq-base)
command -v dhclient >/dev/null 2>&1 || need_apt+=(isc-dhcp-client)
command -v chronyd >/dev/null 2>&1 || { need_apt+=(chrony); lab_daemons+=(chrony); }   # NTP
command -v redis-server >/dev/null 2>&1 || { need_apt+=(redis-server); lab_daemons+=(redis-server); } # RESP
command -v redis-cli >/dev/null 2>&1 || need_apt+=(redis-tools)                       # RESP
command -v ping >/dev/null 2>&1 || need_apt+=(iputils-ping) # ICMP, ICMPv6 and neighbour discovery
# Without -n, tcpdump_lines runs both printers in a network namespace of their own (unshare -n)
# so that address look-ups fail at once and only port names are looked up.
command -v unshare >/dev/null 2>&1 || need_apt+=(util-linux)
# GNU time (max RSS of a zcap run in the tests).
[ -x /usr/bin/time ] || need_apt+=(time)
if ! command -v cargo >/dev/null 2>&1; then
    # No rustup download here: Debian's toolchain is the fallback; it must be >= 1.85.
    need_apt+=(cargo rustc)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "deps: missing ${need_apt[*]}; run this script as root (sudo) to install them" >&2
        exit 1
    fi
    echo "deps: installing ${need_apt[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    # postfix asks how it is used: a local-only system (the lab runs its own instance).
    printf '%s\n' 'postfix postfix/main_mailer_type select Local only' \
        'postfix postfix/mailname string lab.example' | debconf-set-selections
    # The packages' services must not start: the lab runs its own instances in namespaces.
    # policy-rc.d answering 101 tells invoke-rc.d (and so the maintainer scripts) not to.
    made_policy=
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
        chmod +x /usr/sbin/policy-rc.d
        made_policy=1
    fi
    apt-get update -qq
    apt-get install -y -qq "${need_apt[@]}" >/dev/null
    [ -n "$made_policy" ] && rm -f /usr/sbin/policy-rc.d
    # In case one started anyway: stopped, and not started at boot.
    for d in ${lab_daemons[@]+"${lab_daemons[@]}"}; do
        service "$d" stop >/dev/null 2>&1 || true
        if [ -d /run/systemd/system ]; then
            systemctl disable --now --quiet "$d" >/dev/null 2>&1 || true
        else
            update-rc.d "$d" disable >/dev/null 2>&1 || true
        fi
    done
fi
rustc_minor=$(rustc --version | sed -E 's/^rustc 1\.([0-9]+).*/\1/')
if [ "$rustc_minor" -lt 85 ]; then
    echo "deps: rustc $(rustc --version) is too old; zcrx needs Rust >= 1.85 (install it with rustup)" >&2
    exit 1
fi
# Python oracles of the names test: ja4plus (FoxIO's JA4 in Python, on scapy), aioquic (QUIC
# Initials of versions 1 and 2), dnslib (the DNS responder).
need_pip=()
for m in ja4plus:ja4plus aioquic:aioquic dnslib:dnslib scapy:scapy; do
    python3 -c "import ${m%%:*}" >/dev/null 2>&1 || need_pip+=("${m#*:}")
done
if [ ${#need_pip[@]} -gt 0 ]; then
    echo "deps: pip installing ${need_pip[*]}" >&2
    python3 -m pip install -q --break-system-packages "${need_pip[@]}" >/dev/null
fi
# ClickHouse for docs/scale-out's tables: chDB (ClickHouse embedded, from PyPI), because
# Debian's clickhouse-server is 18.16 (2018), without TTL, DateTime64, IPv6 columns or
# Kafka headers. 3.7.2 (ClickHouse 25.8): the newest whose Kafka engine runs embedded.
if ! python3 -c 'import chdb, sys; sys.exit(chdb.__version__ != "3.7.2")' >/dev/null 2>&1; then
    echo "deps: pip installing chdb 3.7.2" >&2
    python3 -m pip install -q --break-system-packages chdb==3.7.2 >/dev/null
fi
# A Kafka producer with a current librdkafka (the PyPI wheel bundles it): Debian's kcat and
# python3-confluent-kafka are on librdkafka 2.0.2, which misreads the broker's ApiVersions
# answer (its tagged fields) and never connects.
if ! python3 -c 'import confluent_kafka' >/dev/null 2>&1; then
    echo "deps: pip installing confluent-kafka" >&2
    python3 -m pip install -q --break-system-packages 'confluent-kafka>=2.6' >/dev/null
fi
# Network namespaces are kept under /run/netns by iproute2.
mkdir -p /run/netns 2>/dev/null || true
# Community ID (flowcache's community_id, zcap's JSON and IPFIX) is checked against the
# specification's reference implementation, the `communityid` Python package.
if ! python3 -c 'import communityid' >/dev/null 2>&1; then
    echo "deps: installing the communityid Python package" >&2
    python3 -m pip install -q --break-system-packages communityid
fi
