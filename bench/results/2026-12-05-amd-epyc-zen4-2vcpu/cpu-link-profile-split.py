import sys, bisect, collections
# sampler intervals with napi ns/pkt and packets
rows=[]
for line in open(sys.argv[1]):
    f=line.split(" ",4)
    t=int(f[0]); p=int(f[1]); napi=f[3]
    d={}
    for r in napi.split("|"):
        if not r: continue
        pid,c,run,ts,on=r.split(":")
        d[pid]=int(run)
    rows.append((t,p,d))
pid=sys.argv[3]
iv=[]
for a,b in zip(rows,rows[1:]):
    if pid in a[2] and pid in b[2]:
        dp=b[1]-a[1]; dt=(b[0]-a[0])/1e9
        if dp>0:
            iv.append((a[0],b[0],dp,(b[2][pid]-a[2][pid])/dp, dp/dt/1e6))
starts=[x[0] for x in iv]
cls={'fast':collections.Counter(),'slow':collections.Counter()}
pk={'fast':0,'slow':0}; n={'fast':0,'slow':0}
lo,hi=float(sys.argv[4]),float(sys.argv[5])
samp=collections.defaultdict(collections.Counter)
for line in open(sys.argv[2]):
    t,s=line.split()
    samp[bisect.bisect_right(starts,int(float(t)*1e9))-1][s]+=1
for i,(s,e,dp,ns,mpps) in enumerate(iv):
    if not (lo<=mpps<=hi): continue
    c='fast' if ns<650 else ('slow' if ns>800 else None)
    if c is None: continue
    cls[c].update(samp[i]); pk[c]+=dp; n[c]+=1
period=1e9/4999
print("intervals", n, "pkts", pk)
tot={c:sum(cls[c].values())*period/pk[c] for c in cls if pk[c]}
print("total ns/pkt", tot)
keys=set(cls['fast'])|set(cls['slow'])
rowsout=[]
for k in keys:
    f=cls['fast'][k]*period/max(pk['fast'],1); s=cls['slow'][k]*period/max(pk['slow'],1)
    rowsout.append((s-f,k,f,s))
rowsout.sort(reverse=True)
for d,k,f,s in rowsout[:25]: print("%-45s fast %6.1f slow %6.1f  diff %6.1f"%(k,f,s,d))
