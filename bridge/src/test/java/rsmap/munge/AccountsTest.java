// Names and ids from passwd(5) and group(5) files.
package rsmap.munge;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AccountsTest {
    @TempDir
    Path dir;

    private Accounts accounts() throws Exception {
        Files.writeString(dir.resolve("passwd"), String.join("\n",
                "root:x:0:0:root:/root:/bin/bash",
                "",
                "# not an entry",
                "rsmap:x:998:997:rsmapd:/var/lib/rsmap:/usr/sbin/nologin",
                "broken:x:notanumber:1::/:/bin/sh",
                "+nisuser::::::",
                "bob:x:1001:1001::/home/bob:/bin/sh") + "\n");
        Files.writeString(dir.resolve("group"), "root:x:0:\nrsmap:x:997:\nbob:x:1001:\n");
        return new Accounts(dir.resolve("passwd"), dir.resolve("group"));
    }

    @Test
    void uid_byName_fromTheFile() throws Exception {
        Accounts a = accounts();
        assertThat(a.uid("rsmap")).isEqualTo(OptionalLong.of(998));
        assertThat(a.uid("root")).isEqualTo(OptionalLong.of(0));
        assertThat(a.uid("broken")).isEmpty(); // a line that says no number is no answer, not uid 0
        assertThat(a.uid("no-such-user-rsmap")).isEmpty(); // nor does id -u know it
    }

    @Test
    void names_byId_fromTheFiles() throws Exception {
        Accounts a = accounts();
        assertThat(a.user(1001)).isEqualTo(Optional.of("bob"));
        assertThat(a.user(0)).isEqualTo(Optional.of("root"));
        assertThat(a.user(4242)).isEmpty();
        assertThat(a.group(997)).isEqualTo(Optional.of("rsmap"));
        assertThat(a.group(4242)).isEmpty();
    }

    @Test
    void missingFiles_knowNoNames() {
        Accounts a = new Accounts(dir.resolve("none"), dir.resolve("none"));
        assertThat(a.user(0)).isEmpty();
        assertThat(a.group(0)).isEmpty();
    }
}
