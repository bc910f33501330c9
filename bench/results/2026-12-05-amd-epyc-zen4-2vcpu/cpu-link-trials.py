import json, sys, statistics as st, collections
r=json.load(open(sys.argv[1]))
pts=r["capacity"] if "capacity" in r else r
trials=[]
seen=set()
for p in pts:
    if p.get("trials_shared"): continue
    for t in p["trials"]:
        trials.append((p["mode"],t))
allns=[x for _,t in trials if t.get("cpu_link") for x in (t["cpu_link"]["before_ns"],t["cpu_link"]["after_ns"])]
short=min(allns)
print("trials",len(trials),"shortest",round(short,1))
g=collections.defaultdict(list)
for m,t in trials:
    l=t.get("cpu_link")
    if not l or t["sent"]==0: continue
    nb=l["before_ns"]<=2*short; na=l["after_ns"]<=2*short
    state="near" if nb and na else ("far" if not nb and not na else "mixed")
    g[(m,state)].append(t)
for (m,s),ts in sorted(g.items()):
    hi=[t for t in ts if t["offered_mpps"]>=0.8]
    napi=[t["napi_ns_per_frame"] for t in hi if t.get("napi_ns_per_frame")]
    cpu=[t["rx_cpu_ns_per_delivered"] for t in hi if t["rx_cpu_ns_per_delivered"]>0]
    passed=[t["offered_mpps"] for t in ts if t["lost"]==0]
    print("%-60s %-5s trials %3d (>=0.8 Mpps %3d) napi ns/frame median %s  rx cpu ns/pkt %s  highest lossless %.3f"%(m[:60],s,len(ts),len(hi),
      round(st.median(napi)) if napi else "-", round(st.median(cpu)) if cpu else "-", max(passed) if passed else 0))
