package io.redlease.boot.autoconfigure.jdbc;

import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.jdbc.FenceSchema;
import io.redlease.jdbc.FenceTable;
import javax.sql.DataSource;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.jdbc.EmbeddedDatabaseConnection;
import org.springframework.boot.sql.init.DatabaseInitializationMode;

/**
 * Prepares the fence table at startup: creates it as {@code redlease.jdbc.initialize-schema} says,
 * or fails when it is missing, then adds a row for every election.
 */
final class FenceTables {

    private static final Log logger = LogFactory.getLog("io.redlease.jdbc");

    private FenceTables() {}

    static FenceTable prepare(
            DataSource dataSource, RedleaseJdbcProperties properties, Elections elections) {
        FenceTable table;
        try {
            table = new FenceTable(dataSource, properties.getTableName());
        } catch (IllegalArgumentException ex) {
            throw new InvalidConfigurationPropertyValueException(
                    "redlease.jdbc.table-name",
                    properties.getTableName(),
                    "It must be a plain SQL identifier, optionally schema-qualified, such as"
                            + " redlease_fence or jobs.redlease_fence.");
        }
        FenceSchema schema;
        try {
            schema = new FenceSchema(table, properties.getPlatform());
        } catch (IllegalArgumentException ex) {
            throw new InvalidConfigurationPropertyValueException(
                    "redlease.jdbc.platform",
                    properties.getPlatform(),
                    "It must be one of "
                            + FenceSchema.PLATFORMS
                            + ", or unset to detect the platform from the database.");
        }
        if (!schema.exists() && shouldCreate(properties.getInitializeSchema(), dataSource)) {
            logger.info(
                    "redlease: creating the fence table "
                            + table.name()
                            + " with "
                            + schema.scriptLocation());
            schema.create();
        }
        schema.verify();
        for (Elector elector : elections.asMap().values()) {
            table.addRow(elector.name());
        }
        return table;
    }

    private static boolean shouldCreate(DatabaseInitializationMode mode, DataSource dataSource) {
        return switch (mode) {
            case ALWAYS -> true;
            case EMBEDDED -> EmbeddedDatabaseConnection.isEmbedded(dataSource);
            case NEVER -> false;
        };
    }
}
