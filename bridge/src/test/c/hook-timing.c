/* the daemon and its protocol benchmark: what rsmap-hook prolog and epilog add to a job start, beside the exec of a no-op C
 * program, all timed by this C parent (fork, exec, wait) against a separate running rsmapd, as execd would.
 * Usage: RSMAP_SOCKET=... USER=root RSMAP_REQUEST=nic=1 hook-timing ROUNDS NOOP HOOK (docs/benchmarks.md). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/wait.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec/1e3;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
static double run(char*const*argv){double t0=now();pid_t p=fork();if(!p){int fd=open("/dev/null",O_WRONLY);dup2(fd,1);dup2(fd,2);execv(argv[0],argv);_exit(127);}int st;waitpid(p,&st,0);if(!WIFEXITED(st)||WEXITSTATUS(st)){fprintf(stderr,"%s exit %d\n",argv[0],WEXITSTATUS(st));}return now()-t0;}
int main(int argc,char**argv){int n=atoi(argv[1]);double*a=malloc(n*8),*b=malloc(n*8),*c=malloc(n*8);char id[32];
 char*noop[]={argv[2],NULL};char*pro[]={argv[3],"prolog",NULL};char*epi[]={argv[3],"epilog",NULL};
 for(int k=0;k<n;k++){snprintf(id,sizeof id,"%d",100000+k);setenv("JOB_ID",id,1);a[k]=run(noop);b[k]=run(pro);c[k]=run(epi);}
 qsort(a,n,8,cmp);qsort(b,n,8,cmp);qsort(c,n,8,cmp);
 printf("no-op exec median %.0f us; prolog %.0f us (adds %.0f); epilog %.0f us (adds %.0f)\n",a[n/2],b[n/2],b[n/2]-a[n/2],c[n/2],c[n/2]-a[n/2]);}
