// Test support for the clusters of real workload managers (SlurmIT, GridEngineIT): what a real rsmapd holds,
// read by QUERY over its socket, and a bounded wait until a job's grant is gone.
package rsmap.wire;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public final class HeldGrants {
    private static final ObjectMapper JSON = new ObjectMapper();

    private HeldGrants() {
    }

    /** Job (job.task for an array task) -> the identifiers of {@code map} it holds on {@code host}. */
    public static Map<String, List<String>> of(Path socket, String host, String map) throws Exception {
        try (TestClient c = new TestClient(socket)) {
            c.call(Frame.of(1, Code.INIT.value(), Session.VERSION));
            JsonNode q = JSON.readTree(c.call(Frame.of(2, Code.QUERY.value())).get(0).text(0));
            Map<String, List<String>> out = new LinkedHashMap<>();
            for (JsonNode j : q.path("jobs")) {
                List<String> ids = new ArrayList<>();
                j.path("grants").path(host).path(map).forEach(i -> ids.add(i.asText()));
                String task = j.path("task").asText("");
                out.put(j.path("job").asText() + (task.isEmpty() || task.equals("undefined") ? "" : "." + task), ids);
            }
            return out;
        }
    }

    /** What is held once nothing is for {@code job} (null: for any job), or after 30 s what still is. */
    public static Map<String, List<String>> awaitReleased(Path socket, String host, String map, String job)
            throws Exception {
        return Polls.retry(Duration.ofSeconds(30), () -> of(socket, host, map),
                h -> job == null ? h.isEmpty() : !h.containsKey(job));
    }
}
