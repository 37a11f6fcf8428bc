package io.redlease.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.util.List;
import org.junit.jupiter.api.Test;

class ServerUrlTests {

    private static ServerUrl postgres(String url) {
        return ServerUrl.parse(
                "REDLEASE_TEST_POSTGRES_URL",
                url,
                List.of("postgresql", "postgres"),
                5432,
                "postgres",
                "",
                "test");
    }

    @Test
    void libpqFormWithCredentials() {
        assertThat(postgres("postgresql://app:s%40cret@db.example:6543/orders"))
                .isEqualTo(new ServerUrl("db.example", 6543, "app", "s@cret", "orders"));
    }

    @Test
    void jdbcFormWithCredentialsInTheQuery() {
        assertThat(postgres("jdbc:postgresql://db:6543/orders?user=app&password=pw"))
                .isEqualTo(new ServerUrl("db", 6543, "app", "pw", "orders"));
    }

    @Test
    void defaultsFillWhatIsMissing() {
        assertThat(postgres("postgres://db"))
                .isEqualTo(new ServerUrl("db", 5432, "postgres", "", "test"));
    }

    @Test
    void amqpDefaultVirtualHostAndGuest() {
        ServerUrl url =
                ServerUrl.parse(
                        "X", "amqp://broker:5673", List.of("amqp"), 5672, "guest", "guest", "/");
        assertThat(url).isEqualTo(new ServerUrl("broker", 5673, "guest", "guest", "/"));
        assertThat(
                        ServerUrl.parse(
                                "X",
                                "amqp://u:p@broker/%2Fv",
                                List.of("amqp"),
                                5672,
                                "guest",
                                "guest",
                                "/"))
                .isEqualTo(new ServerUrl("broker", 5672, "u", "p", "/v"));
    }

    @Test
    void aWrongSchemeNamesTheVariableAndTheForm() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> postgres("mysql://db/test"))
                .withMessage(
                        "REDLEASE_TEST_POSTGRES_URL must look like"
                                + " postgresql://[user[:password]@]host[:port]/test but was mysql://db/test");
    }

    @Test
    void toStringLeavesThePasswordOut() {
        assertThat(postgres("postgresql://app:hunter2@db/test").toString())
                .doesNotContain("hunter2");
    }
}
