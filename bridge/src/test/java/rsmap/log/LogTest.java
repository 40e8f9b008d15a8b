// rsmapd's log lines: journald's priority prefix under systemd, a readable prefix on a terminal, and
// always one line.
package rsmap.log;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class LogTest {
    @Test
    void underJournald_eachLineCarriesItsSyslogPriority() {
        assertThat(Log.format(Log.Level.WARNING, "released job 7 (gone)", true)).isEqualTo("<4>released job 7 (gone)");
        assertThat(Log.format(Log.Level.INFO, "job 7 granted", true)).isEqualTo("<6>job 7 granted");
        assertThat(Log.format(Log.Level.ERROR, "x", true)).isEqualTo("<3>x");
    }

    @Test
    void onATerminal_theNameAndLevel_andNeverASecondLine() {
        assertThat(Log.format(Log.Level.INFO, "job 7 granted", false)).isEqualTo("rsmapd: job 7 granted");
        assertThat(Log.format(Log.Level.WARNING, "a\nb", false)).isEqualTo("rsmapd: warning: a b");
    }

    /** The socket server's fault reports (Log.report) start each line by the same rule. */
    @Test
    void prefix_ofAnError_isWhatEveryReportLineStartsWith() {
        assertThat(Log.prefix(Log.Level.ERROR, true)).isEqualTo("<3>");
        assertThat(Log.prefix(Log.Level.ERROR, false)).isEqualTo("rsmapd: error: ");
    }
}
