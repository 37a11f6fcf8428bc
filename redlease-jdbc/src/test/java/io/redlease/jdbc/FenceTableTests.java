package io.redlease.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.jdbc.core.JdbcTemplate;

/** {@link FenceTable}'s own statements, on the real databases and H2. */
class FenceTableTests {

    @Test
    void addRowCommitsOnAPoolWithAutoCommitOff() {
        DataSource h2 = Database.H2.dataSource();
        FenceTable setup = new FenceTable(h2, Database.uniqueName("rl_autocommit"));
        new FenceSchema(setup, "h2").create();
        FenceTable table = new FenceTable(Databases.withoutAutoCommit(h2), setup.name());
        table.addRow("election");
        // read on a fresh connection of the plain data source
        assertThat(setup.token("election")).hasValue(0);
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void electionsWhoseNamesDifferOnlyInCaseGetRowsOfTheirOwn(Database database) {
        DataSource dataSource = database.dataSource();
        FenceTable table = new FenceTable(dataSource, Database.uniqueName("rl_case"));
        new FenceSchema(table, database.platform).create();
        try {
            table.addRow("Case-Election");
            table.addRow("case-election");
            assertThat(
                            new JdbcTemplate(dataSource)
                                    .queryForList(
                                            "SELECT name FROM " + table.name() + " ORDER BY name",
                                            String.class))
                    .containsExactlyInAnyOrder("Case-Election", "case-election");
        } finally {
            new JdbcTemplate(dataSource).execute("DROP TABLE " + table.name());
        }
    }
}
