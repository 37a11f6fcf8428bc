package io.redlease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/**
 * A {@link LeadershipContext} over a disabled registry: every answer is "this instance does not
 * lead".
 */
class LeadershipContextTests {

    private static final String REASON = "leader election is off (test.switch=off)";

    private final Elections elections = Elections.disabled(REASON, "node-1");

    private final LeadershipContext context = new LeadershipContext(elections);

    @Test
    void aDisabledContextSaysItDoesNotLead() {
        assertThat(context.isLeader()).isFalse();
        assertThat(context.token()).isEmpty();
        assertThat(context.term()).isEmpty();
        assertThat(context.boundTerm()).isEmpty();
        assertThat(context.fencer()).isEmpty();
        assertThat(context.slot()).isEmpty();
        assertThat(context.partition()).isEmpty();
        assertThat(context.leaderInfo()).isEmpty();
        assertThat(context.instanceId()).isEqualTo("node-1");
        context.resign();
        StepVerifier.create(context.reactiveTerm()).verifyComplete();
    }

    @Test
    void aDisabledContextRefusesAFencerNamingTheReason() {
        assertThatThrownBy(context::requireFencer)
                .isInstanceOf(ElectionDisabledException.class)
                .isNotInstanceOf(NotLeaderException.class)
                .hasMessage("redlease: no fencer: " + REASON);
        StepVerifier.create(context.reactiveFencer())
                .expectErrorSatisfies(
                        error ->
                                assertThat(error)
                                        .isInstanceOf(ElectionDisabledException.class)
                                        .hasMessageContaining(REASON))
                .verify();
        assertThatThrownBy(context::elector)
                .isInstanceOf(ElectionDisabledException.class)
                .hasMessageContaining(REASON);
        assertThatThrownBy(() -> context.partitions("tenants"))
                .isInstanceOf(ElectionDisabledException.class)
                .hasMessageContaining("tenants")
                .hasMessageContaining(REASON);
    }

    @Test
    void aDisabledContextAnswersForAnyElectionId() {
        LeadershipContext audit = context.election("audit");
        assertThat(audit.isLeader()).isFalse();
        assertThat(audit.fencer()).isEmpty();
        assertThatThrownBy(audit::requireFencer)
                .isInstanceOf(ElectionDisabledException.class)
                .hasMessageContaining(REASON);
    }

    @Test
    void aDisabledRegistryHasNoElections() {
        assertThat(elections.isEnabled()).isFalse();
        assertThat(elections.ids()).isEmpty();
        assertThat(elections.asMap()).isEmpty();
        assertThat(elections.partitionedAsMap()).isEmpty();
        assertThat(elections.find(null)).isEmpty();
        assertThatThrownBy(() -> elections.get(null))
                .isInstanceOf(ElectionDisabledException.class)
                .hasMessage("redlease: no elector for election 'default': " + REASON);
        assertThat(elections).hasToString("Elections[disabled]");
    }

    @Test
    void aDisabledRegistryGeneratesAnInstanceIdWhenNoneIsGiven() {
        assertThat(new LeadershipContext(Elections.disabled(REASON, null)).instanceId())
                .isNotBlank();
        assertThatIllegalArgumentException().isThrownBy(() -> Elections.disabled(" ", null));
    }

    @Test
    void anEnabledRegistrySaysSo() {
        assertThat(Elections.of(Map.of()).isEnabled()).isTrue();
    }
}
