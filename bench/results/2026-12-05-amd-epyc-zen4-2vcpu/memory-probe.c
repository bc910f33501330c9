#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
int main(int argc,char**argv){
  int n=atoi(argv[1]); size_t N=(4<<20)/8; uint64_t *a=malloc(N*8);
  for(size_t i=0;i<N;i++)a[i]=i; for(size_t i=N-1;i>0;i--){size_t j=rand()%(i+1);uint64_t t=a[i];a[i]=a[j];a[j]=t;}
  for(int k=0;k<n;k++){
    double t0=now(); uint64_t x=1; for(int i=0;i<2000000;i++){x=x*6364136223846793005ULL+1;}
    double t1=now(); uint64_t p=0; for(int i=0;i<200000;i++){p=a[p];}
    double t2=now();
    printf("%.3f %.3f %lu\n",(t1-t0)/2e6,(t2-t1)/2e5,(unsigned long)(x+p)&1);
    fflush(stdout); usleep(100000);
  }
}
