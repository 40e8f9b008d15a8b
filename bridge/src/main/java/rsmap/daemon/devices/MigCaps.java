// A slice's capability nodes: the driver's /dev/nvidia-caps/nvidia-capM of its GPU instance and compute
// instance, M read from mig_caps_file ("gpuN/giG/access M", "gpuN/giG/ciC/access M"; N the card's minor).
package rsmap.daemon.devices;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import rsmap.ParseException;
import rsmap.complex.Value;
import rsmap.map.Characteristics;
import rsmap.map.DeviceList;
import rsmap.map.Instance;

/** A slice whose nodes cannot be found is not given to a job: CUDA could not open it (fail closed). */
final class MigCaps {
    private MigCaps() {
    }

    /** The two nodes of gi {@code gi}, ci {@code ci} of the card with minor {@code minor}, as {@code path:rw}. */
    static List<String> nodes(Path capsFile, Path devDir, int minor, int gi, int ci) throws IOException {
        Map<String, String> minors = new HashMap<>();
        for (String line : Files.readAllLines(capsFile)) {
            String[] f = line.strip().split("\\s+");
            if (f.length == 2) {
                minors.put(f[0], f[1]);
            }
        }
        List<String> out = new ArrayList<>();
        for (String name : List.of("gpu" + minor + "/gi" + gi + "/access", "gpu" + minor + "/gi" + gi + "/ci" + ci
                + "/access")) {
            String m = minors.get(name);
            if (m == null || !m.matches("[0-9]{1,7}")) {
                throw new IOException(capsFile + " has no minor for " + name);
            }
            Path node = devDir.resolve("nvidia-caps").resolve("nvidia-cap" + m);
            if (!Files.exists(node)) {
                throw new IOException("capability node " + node + " (" + name + ") does not exist");
            }
            out.add(node + ":rw");
        }
        return out;
    }

    /** {@code i} with {@code nodes} added to its devices=. */
    static Instance widened(Instance i, List<String> nodes) {
        Map<String, Value> values = new HashMap<>(i.characteristics().asMap());
        Value old = values.get(DeviceList.CHARACTERISTIC);
        if (old == null) {
            return i; // the table declares no devices: no policy to widen
        }
        try {
            values.put(DeviceList.CHARACTERISTIC, Value.parse(old.type(), old.text() + ";" + String.join(";", nodes)));
        } catch (ParseException e) {
            return i;
        }
        return new Instance(i.id(), Characteristics.of(values));
    }
}
