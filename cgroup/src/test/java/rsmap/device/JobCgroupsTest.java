// Which job a process belongs to by its cgroups: rsmapd's JOB_ENTER never moves a process that sits in
// another job's cgroup (never widen another job's devices).
package rsmap.device;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class JobCgroupsTest {
    @Test
    void foreignJob_isFoundInEveryKindOfJobCgroup_butNotInTheJobsOwn() {
        String v2 = "0::/ocs6444-jobs.slice/ocs6444.7.scope\n";
        assertThat(JobCgroups.foreignJob(v2, "7")).isEmpty();
        assertThat(JobCgroups.foreignJob(v2, "7.1")).isEmpty(); // task 1 of a plain job is the job
        assertThat(JobCgroups.foreignJob(v2, "8")).contains("7");
        String array = "0::/ocs6444-jobs.slice/ocs6444.7.3.scope\n";
        assertThat(JobCgroups.foreignJob(array, "7.3")).isEmpty();
        assertThat(JobCgroups.foreignJob(array, "7.4")).contains("7.3");
        String v1 = "12:devices:/rsmap/9\n11:memory:/\n0::/\n";
        assertThat(JobCgroups.foreignJob(v1, "9")).isEmpty();
        assertThat(JobCgroups.foreignJob(v1, "10")).contains("9");
        assertThat(JobCgroups.foreignJob("0::/system.slice/rsmap-12.scope\n", "13")).contains("12");
    }

    @Test
    void processesOutsideAnyJob_areNoOnesJob() {
        assertThat(JobCgroups.foreignJob("0::/user.slice/user-1000.slice/session-3.scope\n", "7")).isEmpty();
        assertThat(JobCgroups.foreignJob("12:devices:/\n0::/init.scope\n", "7")).isEmpty();
        assertThat(JobCgroups.foreignJob("0::/system.slice/ocs6444-execd.service\n", "7")).isEmpty();
        assertThat(JobCgroups.foreignJob("garbage without colons\n\n", "7")).isEmpty();
    }

    @Test
    void thisProcess_isReadFromProc() throws Exception {
        assertThat(JobCgroups.foreignJob(ProcessHandle.current().pid(), "no-such-job-xyz")).isEmpty();
    }
}
