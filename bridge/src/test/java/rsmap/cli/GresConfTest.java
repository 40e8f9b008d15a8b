// rsmap gres-conf: gres.conf lines from a host's maps, the slurm.conf lines in comments.
package rsmap.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static rsmap.cli.MainTest.run;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class GresConfTest {
    @TempDir
    Path tmp;

    private Path conf(String complexValues) throws Exception {
        Files.copy(Path.of("..", "examples", "complexes"), tmp.resolve("complexes"));
        return Files.writeString(tmp.resolve("rsmapd.conf"), "complexes = complexes\nhost = node07\ncomplex_values = "
                + complexValues + "\n");
    }

    @Test
    void gresConf_sharedCards_countsEveryShare_leavesPerSlotMapsOut() throws Exception {
        Path c = conf("gpu=4(gpu0[devices=/dev/nvidia0:rw] gpu0[devices=/dev/nvidia0:rw] gpu1[devices=/dev/nvidia1:rw] "
                + "gpu1[devices=/dev/nvidia1:rw]),nic=2(ib0 ib1)");
        MainTest.Run r = run("gres-conf", "--config", c.toString(), "--files");
        assertThat(r.err()).isEmpty();
        assertThat(r.code()).isZero();
        assertThat(r.out()).isEqualTo("# gres.conf for node07 from " + c + " (rsmap gres-conf): Slurm counts rsmap's "
                + "instances; rsmapd grants them\n"
                + "# slurm.conf: GresTypes=rsmap_gpu\n"
                + "# slurm.conf: NodeName=node07 ... Gres=rsmap_gpu:4\n"
                + "# gpu: no File=, its instances do not each have one device file of their own\n"
                + "# nic: left out, consumable YES (rsmap grants it per slot, Slurm counts per node)\n"
                + "NodeName=node07 Name=rsmap_gpu Count=4 Flags=CountOnly\n");
    }

    /** instances | File= (none: no File= for this map). */
    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            gpu0[devices=/dev/nvidia0:rw] gpu1[devices=/dev/nvidia1:rw]  | /dev/nvidia[0-1]
            gpu0[devices=/dev/nvidia2:rw] gpu1[devices=/dev/nvidia3:rw] gpu2[devices=/dev/nvidia4] | /dev/nvidia[2-4]
            gpu0[devices=/dev/nvidia0:rw]                                | /dev/nvidia0
            gpu0[devices=/dev/nvidia0:rw] gpu1[devices=/dev/nvidia2:rw]  | /dev/nvidia0,/dev/nvidia2
            gpu0[devices=/dev/dri/card0] gpu1[devices=/dev/nvidia1]      | /dev/dri/card0,/dev/nvidia1
            gpu0[devices=/dev/nvidia0;/dev/nvidiactl] gpu1[devices=/dev/nvidia1;/dev/nvidiactl] | none
            gpu0 gpu1                                                    | none
            """)
    void gresConf_files_onlyWhereEachInstanceHasItsOwnFile(String instances, String file) throws Exception {
        int n = instances.split(" ").length;
        Path c = conf("gpu=" + n + "(" + instances + ")");
        MainTest.Run r = run("gres-conf", "--config", c.toString(), "--files");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).endsWith("NodeName=node07 Name=rsmap_gpu Count=" + n + " Flags=CountOnly" + (file.equals("none") ? "" : " File=" + file)
                + "\n");
    }

    /** docs/gpus.md, "Declare": a gpu_map rsmapd builds from NVML is counted as rsmapd builds it. */
    @Test
    void gresConf_gpuMapBuiltFromNvml_countsTheCardsTimesTheirShares_orSaysThereIsNoNvml() throws Exception {
        rsmap.daemon.GpuStub.use(tmp.resolve("nvml.json"), rsmap.daemon.GpuStub.cards(2));
        Path c = conf("nic=2(ib0 ib1)");
        Files.writeString(c, Files.readString(c) + "nvml_library = " + rsmap.daemon.GpuStub.LIBRARY + "\ngpu_map = gpu\n"
                + "gpu_shares = 4\ngpu_dev_dir = " + tmp + "\n");
        MainTest.Run r = run("gres-conf", "--config", c.toString());
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).endsWith("NodeName=node07 Name=rsmap_gpu Count=8 Flags=CountOnly\n");
        Files.writeString(c, Files.readString(c).replace("nvml_library = " + rsmap.daemon.GpuStub.LIBRARY,
                "nvml_library = " + tmp.resolve("no-such-libnvidia-ml.so.1")));
        MainTest.Run none = run("gres-conf", "--config", c.toString());
        assertThat(none.code()).isEqualTo(2);
        assertThat(none.err()).startsWith("error: gpu_map = gpu is built from NVML, and there is none: ");
        assertThat(none.err().lines()).hasSize(1);
    }

    @Test
    void gresConf_badConfig_isOneErrorLine_exitTwo() throws Exception {
        Path c = conf("gpu=2(a)");
        MainTest.Run r = run("gres-conf", "--config", c.toString());
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).startsWith("error: " + c + ": complex_values: ").doesNotContain("\n\n");
        assertThat(r.err().lines()).hasSize(1);
        MainTest.Run missing = run("gres-conf", "--config", tmp.resolve("nope").toString());
        assertThat(missing.code()).isEqualTo(2);
        assertThat(missing.err()).isEqualTo("error: " + tmp.resolve("nope") + ": no such file\n");
    }
}
