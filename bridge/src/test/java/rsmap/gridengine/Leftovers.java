// What a test cell leaves that its daemons do not remove themselves: the jobs' device cgroups and the files.
package rsmap.gridengine;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

final class Leftovers {
    private Leftovers() {
    }

    static void removeCgroup(Path top) {
        if (!Files.isDirectory(top)) {
            return;
        }
        try (Stream<Path> s = Files.walk(top)) {
            for (Path d : s.filter(Files::isDirectory).sorted(Comparator.reverseOrder()).toList()) {
                for (String pid : Files.readAllLines(d.resolve("cgroup.procs"))) {
                    if (!pid.isBlank()) {
                        ProcessHandle.of(Long.parseLong(pid.strip())).ifPresent(ProcessHandle::destroyForcibly);
                    }
                }
                Thread.sleep(100);
                Files.deleteIfExists(d);
            }
        } catch (IOException | RuntimeException e) {
            System.err.println("gridengine cluster: could not remove cgroup " + top + ": " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static void deleteTree(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            System.err.println("gridengine cluster: removing " + dir + ": " + e);
        }
    }
}
