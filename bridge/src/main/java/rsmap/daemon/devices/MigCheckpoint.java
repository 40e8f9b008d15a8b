// The slices rsmapd made, on disk: an intent before NVML is asked to create, the result after, the entry
// removed once destroyed; so that after a crash every slice it made is either a running job's or destroyed.
package rsmap.daemon.devices;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * {@code STATE_DIR/mig.json}, {@code {"version":1,"slices":[{"job","id","card","profile","start","state",
 * "gi","ci","uuid"}]}}, written whole each time: temp file, fsync, rename, fsync of the directory (the
 * checkpoint of Kubernetes DRA drivers). States: {@code creating} (asked of NVML, no answer kept),
 * {@code created}. A file that cannot be read is refused at start with its path.
 */
final class MigCheckpoint {
    static final int VERSION = 1;
    private static final ObjectMapper JSON = new ObjectMapper();

    /** One slice of a job. */
    record Entry(String job, MigSlot slot, String card, String state, int gi, int ci, String uuid, List<String> caps) {
        Entry {
            caps = List.copyOf(caps);
        }
    }

    private final Path file;
    private final List<Entry> entries = new ArrayList<>();

    private MigCheckpoint(Path file) {
        this.file = file;
    }

    /** The checkpoint at {@code file} (none yet: empty). */
    static MigCheckpoint open(Path file) throws IOException {
        MigCheckpoint c = new MigCheckpoint(file);
        if (!Files.exists(file)) {
            return c;
        }
        try {
            JsonNode root = JSON.readTree(Files.readString(file));
            if (root == null || root.path("version").asInt() != VERSION || !root.path("slices").isArray()) {
                throw new IOException(file + ": not a MIG checkpoint of version " + VERSION);
            }
            for (JsonNode e : root.path("slices")) {
                MigSlot slot = MigSlot.parse(e.path("id").asText()).orElseThrow(
                        () -> new IOException(file + ": a slice with id '" + e.path("id").asText() + "'"));
                List<String> caps = new ArrayList<>();
                e.path("caps").forEach(x -> caps.add(x.asText()));
                c.entries.add(new Entry(e.path("job").asText(), slot, e.path("card").asText(), e.path("state").asText(),
                        e.path("gi").asInt(-1), e.path("ci").asInt(-1), e.path("uuid").asText(""), caps));
            }
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IOException(file + ": not JSON: " + e.getOriginalMessage());
        }
        return c;
    }

    List<Entry> entries() {
        return List.copyOf(entries);
    }

    Optional<Entry> of(MigSlot slot) {
        return entries.stream().filter(e -> e.slot().equals(slot)).findFirst();
    }

    /** The MIG UUID of job {@code job}'s slice at slot id {@code id}, as its created entry names it; else "". */
    String uuidOf(String job, String id) {
        return MigSlot.parse(id).flatMap(this::of).filter(e -> e.job().equals(job) && e.state().equals("created"))
                .map(Entry::uuid).orElse("");
    }

    /** The MIG UUID of the slice at slot id {@code id}, as an entry names it; else {@code id} itself. */
    String uuidOr(String id) {
        return MigSlot.parse(id).flatMap(this::of).map(Entry::uuid).filter(u -> !u.isEmpty()).orElse(id);
    }

    /** Puts {@code e} in place of the entry of its slot (or adds it) and writes the file. */
    void put(Entry e) throws IOException {
        entries.removeIf(x -> x.slot().equals(e.slot()));
        entries.add(e);
        write();
    }

    /** Removes the entry of {@code slot} and writes the file. */
    void remove(MigSlot slot) throws IOException {
        if (entries.removeIf(x -> x.slot().equals(slot))) {
            write();
        }
    }

    private void write() throws IOException {
        ObjectNode root = JSON.createObjectNode().put("version", VERSION);
        ArrayNode list = root.putArray("slices");
        for (Entry e : entries) {
            ObjectNode o = list.addObject().put("job", e.job()).put("id", e.slot().toString()).put("card", e.card())
                    .put("profile", e.slot().profile()).put("start", e.slot().start()).put("state", e.state())
                    .put("gi", e.gi()).put("ci", e.ci()).put("uuid", e.uuid());
            e.caps().forEach(o.putArray("caps")::add);
        }
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ch.write(java.nio.ByteBuffer.wrap(JSON.writeValueAsBytes(root)));
            ch.force(true);
        }
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        try (FileChannel dir = FileChannel.open(file.getParent(), StandardOpenOption.READ)) {
            dir.force(true);
        }
    }
}
