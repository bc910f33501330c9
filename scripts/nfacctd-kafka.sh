#!/usr/bin/env bash
# Runs nfacctd (pmacct) with its Kafka plugin on the librdkafka that PyPI's confluent-kafka
# wheel bundles (2.x, current): Debian's pmacct links Debian's librdkafka 2.0.2, which
# misreads the ApiVersions answer of current brokers (nisshi's tagged fields) and never
# connects. Both are librdkafka.so.1, the same ABI. Arguments are nfacctd's.
#
#   nfacctd-kafka.sh -f nfacctd.conf
set -euo pipefail
libs=$(python3 -c 'import confluent_kafka, os; print(os.path.join(os.path.dirname(os.path.dirname(confluent_kafka.__file__)), "confluent_kafka.libs"))')
lib=$(ls "$libs"/librdkafka*.so.1 | head -1)
# A directory of its own holding only that library, kept (nfacctd is exec'd).
dir=${ZCRX_CACHE:-$HOME/.cache/zcrx}/nfacctd-librdkafka
mkdir -p "$dir"
ln -sfn "$lib" "$dir/librdkafka.so.1"
LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec nfacctd "$@"
