package io.redlease.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.redlease.boot.autoconfigure.jdbc.RedleaseJdbcProperties;
import io.redlease.core.scheduling.SlotJobs;
import io.redlease.jdbc.FenceClaims;
import io.redlease.jdbc.FenceTable;
import org.junit.jupiter.api.Test;

/**
 * Defaults written out as literals, so that the configuration metadata has them, are the libraries'
 * own defaults.
 */
class PropertyDefaultsTests {

    @Test
    void literalDefaultsAreTheLibrariesDefaults() {
        assertThat(new RedleaseProperties().getScheduling().getMaxCatchUp())
                .isEqualTo(SlotJobs.DEFAULT_MAX_CATCH_UP);
        RedleaseJdbcProperties jdbc = new RedleaseJdbcProperties();
        assertThat(jdbc.getTableName()).isEqualTo(FenceTable.DEFAULT_NAME);
        assertThat(jdbc.getClaimTimeout()).isEqualTo(FenceClaims.DEFAULT_TIMEOUT);
    }
}
