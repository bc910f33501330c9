// Throughput-bound probe: 8 independent integer chains (ports busy), and a latency-bound
// one (a dependent chain), 100 ms samples alternating, ns per iteration.
#define _GNU_SOURCE
#include <stdio.h>
#include <stdint.h>
#include <time.h>
#include <sched.h>
#include <stdlib.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
int main(int argc,char**argv){
  int cpu=atoi(argv[1]); int samples=atoi(argv[2]);
  cpu_set_t s; CPU_ZERO(&s); CPU_SET(cpu,&s); sched_setaffinity(0,sizeof s,&s);
  volatile uint64_t sink;
  for(int k=0;k<samples;k++){
    uint64_t a=1,b=2,c=3,d=4,e=5,f=6,g=7,h=8; long n=0; double t0=now(),t;
    do { for(int i=0;i<10000;i++){ a=a*3+1; b=b*5+3; c=c*7+5; d=d*9+7; e=e*11+9; f=f*13+11; g=g*15+13; h=h*17+15; asm volatile(""::"r"(a),"r"(b),"r"(c),"r"(d),"r"(e),"r"(f),"r"(g),"r"(h)); } n+=10000; t=now(); } while(t-t0<50e6);
    double thr=(t-t0)/n; sink=a^b^c^d^e^f^g^h;
    uint64_t x=1; n=0; t0=now();
    do { for(int i=0;i<10000;i++){ x=x*3+1; asm volatile(""::"r"(x)); } n+=10000; t=now(); } while(t-t0<50e6);
    double lat=(t-t0)/n; sink=x;
    printf("%.3f %.3f %.3f\n",(t0)/1e9,thr,lat); fflush(stdout);
  }
  return 0;
}
