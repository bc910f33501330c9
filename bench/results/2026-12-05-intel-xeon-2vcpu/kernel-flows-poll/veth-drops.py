# Samples the receiving veth's rx_dropped every 0.5 ms; prints (t, dropped-increment) bursts.
import time, sys, os, glob
path = glob.glob('/sys/class/net/zx*b/statistics/rx_dropped')[0]
pk = path.replace('rx_dropped', 'rx_packets')
out = open(sys.argv[1], 'w')
t0 = time.monotonic(); last = int(open(path).read()); lastp = int(open(pk).read())
end = t0 + float(sys.argv[2])
while time.monotonic() < end:
    time.sleep(0.0005)
    d = int(open(path).read()); p = int(open(pk).read())
    now = time.monotonic()
    if d != last or (p - lastp) > 0 and False:
        out.write(f"{time.time():.4f} drop+{d-last} pkts={p}\n")
    last = d
    lastp = p
out.close()
