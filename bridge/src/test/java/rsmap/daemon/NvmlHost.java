// Test support: a stand-in GPU host in a folder of the test's - native-stubs' libnvidia-ml reading the JSON
// description nvml.json, the cards' nodes in dev/ as NVIDIA's driver makes them (nvidiaI, nvidiactl), for MIG
// the capability nodes, their mig-minors file and the stub's state file - and the settings that point a
// daemon at it (docs/gpus.md).
package rsmap.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import rsmap.daemon.config.Config;

/** @param dir the description, dev/ and the MIG files */
public record NvmlHost(Path dir) {
    /** A host in {@code dir} (made, with dev/), the stand-in built by the native-stubs module. */
    public static NvmlHost in(Path dir) throws Exception {
        assertThat(GpuStub.LIBRARY).as("built by the native-stubs module").isRegularFile();
        Files.createDirectories(dir.resolve("dev"));
        return new NvmlHost(dir);
    }

    /** Where the cards' nodes are: gpu_dev_dir. */
    public Path dev() {
        return dir.resolve("dev");
    }

    /** The stand-in's description. */
    public Path description() {
        return dir.resolve("nvml.json");
    }

    /**
     * Writes {@code description} and points NVML (of this process and its children) at it ({@link GpuStub#use});
     * a later one replaces the file atomically, so that NVML, which reads it again at each call that reports
     * health, never sees it half written.
     */
    public Path describe(String description) throws Exception {
        Path file = description();
        if (!Files.exists(file)) {
            return GpuStub.use(file, description);
        }
        Path next = file.resolveSibling(file.getFileName() + ".next");
        Files.writeString(next, description);
        return Files.move(next, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /** The stand-in's events file: NVML's event set reports each line appended to it. */
    public Path events() {
        return dir.resolve("events");
    }

    /** {@code description} (a whole one) naming {@link #events()} as its events_file. */
    public String withEvents(String description) {
        return description.substring(0, description.length() - 1) + ",\"events_file\":\"" + events() + "\"}";
    }

    /** Appends an event to {@link #events()}: a line of JSON, as NVML's event set reports it. */
    public void event(String json) throws Exception {
        Files.writeString(events(), json + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    /** The stand-in's MIG state (the slices the driver holds), named by {@link #describeMig}. */
    public Path migState() {
        return dir.resolve("mig-state.json");
    }

    /** The driver's mig-minors: mig_caps_file. */
    public Path migMinors() {
        return dir.resolve("mig-minors");
    }

    /** {@link MigStub}'s card with MIG on, {@code extra} into the card, its state in {@link #migState()}. */
    public Path describeMig(String extra) throws Exception {
        return describe(MigStub.description(migState(), extra));
    }

    /** The nodes of cards 0 to n - 1, c 195:I, mode 666: open says ENXIO, there is no driver. */
    public void cardNodes(int n) throws Exception {
        for (int i = 0; i < n; i++) {
            ExecdCell.sh("mknod -m 666 " + dev().resolve("nvidia" + i) + " c 195 " + i);
        }
    }

    /** dev/nvidiactl as a plain file, for a host whose nodes are never opened. */
    public void controlFile() throws Exception {
        Files.writeString(dev().resolve("nvidiactl"), "");
    }

    /** The mig-minors file and the capability nodes: character devices where {@code mknod}, plain files else. */
    public void migCaps(boolean mknod) throws Exception {
        MigStub.caps(migMinors(), dev(), mknod);
    }

    /** The settings of a daemon whose map gpu comes from the stand-in, its nodes in dev/. */
    public List<String> settings() {
        return List.of("nvml_library = " + GpuStub.LIBRARY, "gpu_map = gpu", "gpu_dev_dir = " + dev());
    }

    /** The same and the map mig of slices made on demand. */
    public List<String> migSettings() {
        List<String> all = new ArrayList<>(settings());
        all.addAll(List.of("mig_map = mig", "mig_caps_file = " + migMinors()));
        return all;
    }

    /** A daemon in {@code d} serving {@code values} and the stand-in's gpu map, then {@code more}. */
    public Config config(Path d, String values, String... more) throws Exception {
        return TestDaemon.config(d, values, with(settings(), more));
    }

    /** The same with the map mig, declared in its complex table. */
    public Config migConfig(Path d, String values, String... more) throws Exception {
        Config c = TestDaemon.config(d, values, with(migSettings(), more));
        MigStub.declare(c.complexes());
        return c;
    }

    private static String[] with(List<String> settings, String... more) {
        List<String> all = new ArrayList<>(settings);
        all.addAll(List.of(more));
        return all.toArray(new String[0]);
    }
}
