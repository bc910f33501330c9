#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>
#include <immintrin.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
__attribute__((target("avx2"))) static void avx2cpy(char*d,const char*s,size_t n){for(size_t i=0;i<n;i+=32){_mm256_storeu_si256((__m256i*)(d+i),_mm256_loadu_si256((const __m256i*)(s+i)));}}
static void movsb(char*d,const char*s,size_t n){asm volatile("rep movsb":"+D"(d),"+S"(s),"+c"(n)::"memory");}
typedef void(*cp)(char*,const char*,size_t);
int main(int argc,char**argv){
  size_t n=atoi(argv[1]); size_t region=(size_t)atol(argv[2])<<20; size_t off=atoi(argv[3]); int flush=atoi(argv[4]); size_t stride=atoi(argv[5]);
  char*src=aligned_alloc(4096,n+4096); memset(src,5,n+4096);
  char*dst=aligned_alloc(4096,region+8192); memset(dst,1,region+8192);
  cp fs[3]={(cp)memcpy,avx2cpy,movsb}; const char*names[3]={"libc","avx2","movsb"};
  double best[3]={1e18,1e18,1e18}; double tot[3]={0};
  size_t per = 32768/n; if(per<8)per=8;
  size_t pos=0;
  for(int rep=0;rep<41;rep++) for(int k=0;k<3;k++){
    if(flush){ for(size_t i=0;i<per*stride+4096;i+=64) _mm_clflush(dst+i); _mm_mfence(); pos=0;}
    double t=now();
    for(size_t c=0;c<per;c++){ if(pos+stride+off+n>region) pos=0; fs[k](dst+pos+off,src,n); pos+=stride; }
    double e=(now()-t)/per; if(rep>0) tot[k]+=e;
  }
  for(int k=0;k<3;k++) printf("%s %.0f ns  ",names[k],tot[k]/40);
  printf("\n");
}
