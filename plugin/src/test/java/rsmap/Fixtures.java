// The complex table the language tests run against, and small helpers to assert a refusal.
package rsmap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import rsmap.complex.ComplexTable;

public final class Fixtures {
    public static final String TABLE_TEXT = String.join("\n",
            "#name        shortcut type     relop requestable consumable default urgency",
            "arch         a        RESTRING ==    YES         NO         NONE    0",
            "hostname     h        HOST     ==    YES         NO         NONE    0",
            "mem_free     mf       MEMORY   <=    YES         NO         0       0",
            "h_vmem       h_vmem   MEMORY   <=    YES         YES        0       0",
            "slots        s        INT      <=    YES         YES        1       1000",
            "gpu          gpu      RSMAP    <=    YES         HOST       0       0",
            "lic          lic      RSMAP    <=    YES         JOB        0       0",
            "nic          nic      RSMAP    <=    YES         YES        0       0",
            "devices      dev      STRING   ==    YES         NO         NONE    0",
            "memory       gmem     MEMORY   <=    YES         NO         0       0",
            "model        model    CSTRING  ==    YES         NO         NONE    0",
            "vendor       vendor   STRING   ==    YES         NO         NONE    0",
            "numa_node    numa     INT      ==    YES         NO         0       0",
            "gpu_temp     gtemp    INT      >=    YES         NO         0       0",
            "cores        cores    INT      !=    YES         NO         0       0",
            "clock        clock    DOUBLE   <     YES         NO         0       0",
            "runlimit     rl       TIME     >     YES         NO         0:0:0   0",
            "ecc          ecc      BOOL     ==    YES         NO         FALSE   0",
            "family       fam      RESTRING ==    YES         NO         NONE    0",
            "notfam       nfam     RESTRING !=    YES         NO         NONE    0",
            "peer         peer     HOST     ==    YES         NO         NONE    0",
            "hidden       hid      STRING   ==    NO          NO         NONE    0",
            "forced       forced   STRING   ==    FORCED      NO         NONE    0",
            "affinity_mask aff     STRING   ==    YES         NO         NONE    0",
            "");

    public static final ComplexTable TABLE = table();

    private Fixtures() {
    }

    private static ComplexTable table() {
        try {
            return ComplexTable.parse(TABLE_TEXT);
        } catch (ParseException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    /** Asserts that {@code call} is refused at 1-based {@code column} with a message containing {@code fragment}. */
    public static ParseException assertRefused(ThrowingCallable call, int column, String fragment) {
        ParseException e = catchThrowableOfType(ParseException.class, call);
        assertThat(e).as("expected a refusal containing '%s'", fragment).isNotNull();
        assertThat(e.problem()).contains(fragment);
        if (column > 0) {
            assertThat(e.column()).as("column of: %s", e.getMessage()).isEqualTo(column);
        }
        return e;
    }
}
