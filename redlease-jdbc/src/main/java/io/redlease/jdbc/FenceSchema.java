package io.redlease.jdbc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.DatabaseMetaData;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import org.jspecify.annotations.Nullable;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.core.io.ClassPathResource;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.BadSqlGrammarException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.init.ResourceDatabasePopulator;
import org.springframework.jdbc.support.JdbcUtils;

/**
 * The fence table's schema: the script for each supported database, and whether the table exists.
 *
 * <p>Scripts ship in this jar as {@code classpath:io/redlease/jdbc/schema-<platform>.sql} for the
 * platforms {@value #POSTGRESQL}, {@value #MYSQL} (MySQL and MariaDB), {@value #H2}, {@value
 * #SQLSERVER} and {@value #ORACLE}. They create {@value FenceTable#DEFAULT_NAME}; {@link #create()}
 * substitutes the configured table name.
 */
public final class FenceSchema {

    /** Platform name of PostgreSQL. */
    public static final String POSTGRESQL = "postgresql";

    /** Platform name of MySQL and MariaDB. */
    public static final String MYSQL = "mysql";

    /** Platform name of H2. */
    public static final String H2 = "h2";

    /** Platform name of Microsoft SQL Server. */
    public static final String SQLSERVER = "sqlserver";

    /** Platform name of Oracle Database. */
    public static final String ORACLE = "oracle";

    /** The platforms with a shipped schema script. */
    public static final List<String> PLATFORMS = List.of(POSTGRESQL, MYSQL, H2, SQLSERVER, ORACLE);

    private final FenceTable table;

    private final @Nullable String configuredPlatform;

    private volatile @Nullable String platform;

    /**
     * Creates the schema for a table, detecting the platform from the database when a script is
     * needed.
     *
     * @param table the fence table
     */
    public FenceSchema(FenceTable table) {
        this(table, null);
    }

    /**
     * Creates the schema for a table.
     *
     * @param table the fence table
     * @param platform one of {@link #PLATFORMS}, or null to detect it from the database when a
     *     script is needed (so a database without a script can be used once the table exists)
     * @throws IllegalArgumentException if the platform is not supported
     */
    public FenceSchema(FenceTable table, @Nullable String platform) {
        this.table = table;
        this.configuredPlatform = platform != null && !platform.isBlank() ? check(platform) : null;
    }

    /**
     * Returns the database platform, one of {@link #PLATFORMS}: the configured one, else detected
     * from the database.
     *
     * @throws IllegalStateException if no platform was configured and the database has no script
     */
    public String platform() {
        String known = configuredPlatform != null ? configuredPlatform : platform;
        if (known == null) {
            known = detect(table);
            platform = known;
        }
        return known;
    }

    /** Returns the location of the schema script for this platform. */
    public String scriptLocation() {
        return scriptLocation(platform());
    }

    /**
     * Returns the location of the schema script for a platform.
     *
     * @param platform one of {@link #PLATFORMS}
     * @return a {@code classpath:} location
     */
    public static String scriptLocation(String platform) {
        return "classpath:" + scriptPath(check(platform));
    }

    /**
     * Returns the schema script for a platform, with the table name replaced by {@code tableName}.
     *
     * @param platform one of {@link #PLATFORMS}
     * @param tableName the table name
     * @return the script's text
     */
    public static String script(String platform, String tableName) {
        ClassPathResource resource = new ClassPathResource(scriptPath(check(platform)));
        try {
            String text = resource.getContentAsString(StandardCharsets.UTF_8);
            return text.replaceAll(
                    "\\b" + FenceTable.DEFAULT_NAME + "\\b", Matcher.quoteReplacement(tableName));
        } catch (IOException ex) {
            throw new UncheckedIOException("redlease: cannot read " + resource, ex);
        }
    }

    /** Returns whether the table exists with its columns. */
    public boolean exists() {
        try {
            probe();
            return true;
        } catch (BadSqlGrammarException ex) {
            return false;
        }
    }

    /**
     * Throws unless the table exists with its columns.
     *
     * @throws MissingFenceTableException naming the table and the script that creates it
     */
    public void verify() {
        try {
            probe();
        } catch (BadSqlGrammarException ex) {
            String script;
            try {
                script = scriptLocation();
            } catch (IllegalStateException unsupported) {
                script = scriptLocation(POSTGRESQL) + " (adapted to your database)";
            }
            throw new MissingFenceTableException(table.name(), script, ex);
        }
    }

    /**
     * Creates the table with this platform's script unless it exists. Safe when several instances
     * create it at once: if the script fails and the table exists afterwards, another instance
     * created it, and that is success.
     */
    public void create() {
        if (exists()) {
            return;
        }
        String platform = platform();
        ResourceDatabasePopulator populator =
                new ResourceDatabasePopulator(
                        new ByteArrayResource(
                                script(platform, table.name()).getBytes(StandardCharsets.UTF_8),
                                scriptLocation(platform)));
        populator.setSqlScriptEncoding(StandardCharsets.UTF_8.name());
        try {
            populator.execute(table.transactionalDataSource());
        } catch (DataAccessException ex) {
            if (!exists()) {
                throw ex;
            }
        }
    }

    private void probe() {
        new JdbcTemplate(table.transactionalDataSource())
                .query(
                        "SELECT name, token, stamps FROM " + table.name() + " WHERE 1 = 0",
                        rs -> null);
    }

    private static String scriptPath(String platform) {
        return "io/redlease/jdbc/schema-" + platform + ".sql";
    }

    private static String check(String platform) {
        String name = platform.toLowerCase(Locale.ROOT);
        if (!PLATFORMS.contains(name)) {
            throw new IllegalArgumentException(
                    "redlease: no fence table script for platform '"
                            + platform
                            + "'; supported: "
                            + PLATFORMS);
        }
        return name;
    }

    private static String detect(FenceTable table) {
        String product;
        try {
            product =
                    JdbcUtils.extractDatabaseMetaData(
                            table.transactionalDataSource(),
                            DatabaseMetaData::getDatabaseProductName);
        } catch (Exception ex) {
            throw new IllegalStateException(
                    "redlease: cannot read the database product name to choose the fence table"
                            + " script",
                    ex);
        }
        String name = product == null ? "" : product.toLowerCase(Locale.ROOT);
        if (name.contains("postgres")) {
            return POSTGRESQL;
        } else if (name.contains("mysql") || name.contains("mariadb")) {
            return MYSQL;
        } else if (name.equals("h2")) {
            return H2;
        } else if (name.contains("sql server")) {
            return SQLSERVER;
        } else if (name.contains("oracle")) {
            return ORACLE;
        }
        throw new IllegalStateException(
                "redlease: no fence table script for the database '"
                        + product
                        + "'; create the table yourself (columns name, token, stamps; see"
                        + " "
                        + scriptLocation(POSTGRESQL)
                        + ") or choose one of the platforms "
                        + PLATFORMS);
    }

    @Override
    public String toString() {
        return "FenceSchema["
                + table.name()
                + ", "
                + (configuredPlatform != null ? configuredPlatform : platform)
                + "]";
    }
}
