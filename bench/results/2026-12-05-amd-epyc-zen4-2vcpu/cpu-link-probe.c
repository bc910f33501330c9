// Cache-line ping-pong between CPU 0 and CPU 1: the round trip of one line, sampled
// every 100 ms for a given time; prints time, median round trip ns, p10, p90.
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static _Alignas(64) _Atomic long line;
static _Atomic int stop;
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static void pin(int c){cpu_set_t s;CPU_ZERO(&s);CPU_SET(c,&s);pthread_setaffinity_np(pthread_self(),sizeof s,&s);}
static void *echo(void *a){(void)a;pin(1);for(;;){long v=atomic_load_explicit(&line,memory_order_acquire);
 if(v<0)return 0; if(v&1)atomic_store_explicit(&line,v+1,memory_order_release);}}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int argc,char**argv){double dur=argc>1?atof(argv[1]):60;pin(0);pthread_t t;pthread_create(&t,0,echo,0);
 double t0=now();long v=0;enum{N=2000,R=101};static double rt[R];
 while(now()-t0<dur){for(int r=0;r<R;r++){double s=now();for(int i=0;i<N;i++){v++;atomic_store_explicit(&line,v,memory_order_release);
   while(atomic_load_explicit(&line,memory_order_acquire)!=v+1);v++;}rt[r]=(now()-s)/N*1e9;}
  qsort(rt,R,sizeof rt[0],cmp);printf("%.2f %.1f %.1f %.1f\n",now()-t0,rt[R/2],rt[R/10],rt[R*9/10]);fflush(stdout);usleep(100000);}
 atomic_store(&line,-1);pthread_join(t,0);return 0;}
