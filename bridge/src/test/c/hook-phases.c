/* the daemon and its protocol benchmark: where a hook's exchange spends its time, without the exec: in one
 * process, per job: connect, INIT and JOB_START sent in one write (as rsmap-hook prolog), the time to INIT's
 * answer and then to JOB_START's; then INIT and JOB_END on a new connection (as rsmap-hook epilog). Medians.
 * GAP_US (default 0: back to back) idles that many microseconds before each exchange, as a hook's exec does:
 * the daemon's code and data are then cold, as on a host that starts jobs seconds apart.
 * Usage: hook-phases SOCKET JOBS [GAP_US] (docs/benchmarks.md); the daemon must grant nic=1 to root. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec/1e3;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
static int conn(const char*p){int fd=socket(AF_UNIX,SOCK_STREAM,0);struct sockaddr_un a={0};a.sun_family=AF_UNIX;strcpy(a.sun_path,p);if(connect(fd,(void*)&a,sizeof a)){perror("connect");exit(1);}return fd;}
static char buf[65536];
static void idle(int us){if(us>0)usleep(us);}
/* read frames until one with code 8000 (OK) or 8001.. for tid; crude: read until we have seen n OK/ERROR terminators */
static void frame(char*out,unsigned tid,unsigned code,const char*arg){char a[512];if(arg)snprintf(a,sizeof a," %zx:%s",strlen(arg),arg);else a[0]=0;
 char body[600];snprintf(body,sizeof body,"%08x%04x%s",tid,code,a);sprintf(out,"%08zx%s",strlen(body),body);}
static void readframe(int fd,char*code){char h[9]={0};int n=0;while(n<8){int r=read(fd,h+n,8-n);if(r<=0){fprintf(stderr,"eof\n");exit(1);}n+=r;}
 size_t len=strtoul(h,0,16);n=0;while(n<(int)len){int r=read(fd,buf+n,len-n);if(r<=0)exit(1);n+=r;}memcpy(code,buf+8,4);code[4]=0;}
int main(int argc,char**argv){const char*sock=argv[1];int n=atoi(argv[2]);int gap=argc>3?atoi(argv[3]):0;double*c=malloc(n*8),*i=malloc(n*8),*s=malloc(n*8),*e=malloc(n*8);
 for(int k=0;k<n;k++){char job[64],f1[700],f2[700],code[5];snprintf(job,sizeof job,"{\"job\":\"%d\",\"user\":\"root\",\"request\":\"nic=1\"}",900000+k);
  idle(gap);double t0=now();int fd=conn(sock);double t1=now();frame(f1,1,1,"1");frame(f2,2,0x10,job);char both[1400];strcpy(both,f1);strcat(both,f2);write(fd,both,strlen(both));
  do readframe(fd,code);while(strcmp(code,"8000")&&code[0]!='8'); double t2=now();
  do readframe(fd,code);while(code[0]!='8'||!strcmp(code,"8004")); double t3=now(); if(strcmp(code,"8000"))fprintf(stderr,"start %s\n",code);close(fd);
  c[k]=t1-t0;i[k]=t2-t1;s[k]=t3-t2;
  snprintf(job,sizeof job,"{\"job\":\"%d\"}",900000+k);idle(gap);double t4=now();fd=conn(sock);frame(f1,1,1,"1");frame(f2,2,0x11,job);strcpy(both,f1);strcat(both,f2);write(fd,both,strlen(both));
  do readframe(fd,code);while(code[0]!='8');do readframe(fd,code);while(code[0]!='8');close(fd);e[k]=now()-t4;}
 qsort(c,n,8,cmp);qsort(i,n,8,cmp);qsort(s,n,8,cmp);qsort(e,n,8,cmp);
 printf("median: connect %.0f, INIT answer %.0f, JOB_START answer after INIT %.0f, total start %.0f; JOB_END exchange %.0f us\n",c[n/2],i[n/2],s[n/2],c[n/2]+i[n/2]+s[n/2],e[n/2]);}
