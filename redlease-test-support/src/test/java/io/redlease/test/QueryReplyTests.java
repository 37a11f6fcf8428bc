package io.redlease.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.redlease.test.PrometheusServer.Sample;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Reading instant-vector replies of Prometheus's query API. */
class QueryReplyTests {

    @Test
    void labelValuesKeepBracesQuotesAndEscapes() {
        String reply =
                """
                {"status":"success","data":{"resultType":"vector","result":[\
                {"metric":{"__name__":"redlease_leader","name":"{reports}","note":"a \\"q\\" \\\\ \\u00e9}"},\
                "value":[1717000000.123,"1"]},\
                {"metric":{},"value":[1717000000.123,"+Inf"]}]}}
                """;
        assertThat(QueryReply.samples(reply))
                .containsExactly(
                        new Sample(
                                Map.of(
                                        "__name__", "redlease_leader",
                                        "name", "{reports}",
                                        "note", "a \"q\" \\ é}"),
                                1.0),
                        new Sample(Map.of(), Double.POSITIVE_INFINITY));
    }

    @Test
    void anEmptyVectorHasNoSamples() {
        assertThat(
                        QueryReply.samples(
                                "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[]}}"))
                .isEmpty();
    }

    @Test
    void aReplyThatIsNotAVectorIsRefusedWithTheReply() {
        assertThatIllegalArgumentException()
                .isThrownBy(
                        () ->
                                QueryReply.samples(
                                        "{\"status\":\"success\",\"data\":{\"resultType\":\"scalar\",\"result\":[1,\"2\"]}}"))
                .withMessageContaining("not an instant vector reply");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> QueryReply.samples("{\"status\":"))
                .withMessageContaining("expected a value at offset");
    }

    @Test
    void numbersAreReadAsPrometheusWritesThem() {
        assertThat(QueryReply.number("-Inf")).isEqualTo(Double.NEGATIVE_INFINITY);
        assertThat(QueryReply.number("NaN")).isNaN();
        assertThat(QueryReply.number("0.25")).isEqualTo(0.25);
        assertThat(List.of(QueryReply.number("1e3"))).containsExactly(1000.0);
    }
}
