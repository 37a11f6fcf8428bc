package io.redlease.boot.autoconfigure.jdbc;

import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.sql.init.DatabaseInitializationMode;

/** Settings of fenced JDBC transactions ({@code redlease.jdbc.*}). */
@ConfigurationProperties("redlease.jdbc")
public class RedleaseJdbcProperties {

    /**
     * When to create the fence table if it is missing: embedded (only for an embedded database),
     * always, or never (a missing table fails startup).
     */
    private DatabaseInitializationMode initializeSchema = DatabaseInitializationMode.EMBEDDED;

    /** Name of the fence table, optionally schema-qualified. */
    // FenceTable.DEFAULT_NAME, written out so that the configuration metadata has it.
    private String tableName = "redlease_fence";

    /**
     * Database platform whose schema script creates the fence table (postgresql, mysql, h2,
     * sqlserver, oracle); detected from the database when unset.
     */
    private @Nullable String platform;

    /**
     * Whether every read-write transaction on the DataSource is fenced, not only those of
     * {@code @Fenced} methods.
     */
    private boolean fenceAllTransactions;

    /**
     * Election id whose term fences transactions when fence-all-transactions is on; empty for the
     * main election.
     */
    private String election = "";

    /**
     * How long a newly elected term's claim of the fence row waits for the row's lock before it is
     * retried (whole seconds, at least 1s).
     */
    // FenceClaims.DEFAULT_TIMEOUT, written out so that the configuration metadata has it.
    private Duration claimTimeout = Duration.ofSeconds(5);

    public DatabaseInitializationMode getInitializeSchema() {
        return initializeSchema;
    }

    public void setInitializeSchema(DatabaseInitializationMode initializeSchema) {
        this.initializeSchema = initializeSchema;
    }

    public String getTableName() {
        return tableName;
    }

    public void setTableName(String tableName) {
        this.tableName = tableName;
    }

    public @Nullable String getPlatform() {
        return platform;
    }

    public void setPlatform(@Nullable String platform) {
        this.platform = platform;
    }

    public boolean isFenceAllTransactions() {
        return fenceAllTransactions;
    }

    public void setFenceAllTransactions(boolean fenceAllTransactions) {
        this.fenceAllTransactions = fenceAllTransactions;
    }

    public String getElection() {
        return election;
    }

    public void setElection(String election) {
        this.election = election;
    }

    public Duration getClaimTimeout() {
        return claimTimeout;
    }

    public void setClaimTimeout(Duration claimTimeout) {
        this.claimTimeout = claimTimeout;
    }
}
