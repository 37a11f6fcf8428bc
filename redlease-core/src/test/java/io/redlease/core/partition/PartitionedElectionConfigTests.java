package io.redlease.core.partition;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class PartitionedElectionConfigTests {

    @Test
    void defaultsFollowTheElectorsAndBalanceAtMostEvery500Ms() {
        PartitionedElectionConfig config = PartitionedElectionConfig.builder("orders", 16).build();
        assertThat(config.name()).isEqualTo("orders");
        assertThat(config.partitions()).isEqualTo(16);
        assertThat(config.ttl()).isEqualTo(Duration.ofSeconds(5));
        assertThat(config.renewInterval()).isEqualTo(Duration.ofSeconds(5).dividedBy(3));
        assertThat(config.balanceInterval()).isEqualTo(Duration.ofMillis(500));
        assertThat(config.settle()).isEqualTo(Duration.ofMillis(500));
        assertThat(config.instanceId()).isNotEmpty();
    }

    @Test
    void shortLeasesBalanceOnTheRenewCadence() {
        PartitionedElectionConfig config =
                PartitionedElectionConfig.builder("orders", 16).ttl(Duration.ofMillis(600)).build();
        assertThat(config.balanceInterval()).isEqualTo(Duration.ofMillis(200));
    }

    @Test
    void everyPartitionSharesTheInstanceIdAndGetsItsOwnHashTag() {
        PartitionedElectionConfig config =
                PartitionedElectionConfig.builder("orders", 4).instanceId("node-1").build();
        var partition = config.partition(3, new PartitionObserver(3, config.listeners()));
        assertThat(partition.name()).isEqualTo("{orders:p3}");
        assertThat(partition.instanceId()).isEqualTo("node-1");
        assertThat(partition.ttl()).isEqualTo(config.ttl());
    }

    @Test
    void generatedInstanceIdIsTheSameForEveryPartition() {
        PartitionedElectionConfig config = PartitionedElectionConfig.builder("orders", 4).build();
        PartitionObserver observer = new PartitionObserver(0, config.listeners());
        assertThat(config.partition(0, observer).instanceId())
                .isEqualTo(config.partition(1, observer).instanceId())
                .isEqualTo(config.instanceId());
    }

    @Test
    void emptyNameIsRejectedWithTheElectorsMessage() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> PartitionedElectionConfig.builder("", 4).build())
                .withMessage("redlease: empty Name");
    }

    @Test
    void nameWithABraceIsRejected() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> PartitionedElectionConfig.builder("{orders}", 4).build())
                .withMessageContaining("name must not contain '{' or '}'");
    }

    @Test
    void partitionCountOutOfRangeIsRejected() {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> PartitionedElectionConfig.builder("orders", 0).build())
                .withMessage("redlease: partitions must be between 1 and 65536; got 0");
        assertThatIllegalArgumentException()
                .isThrownBy(() -> PartitionedElectionConfig.builder("orders", 65_537).build())
                .withMessageContaining("partitions must be between 1 and 65536");
    }

    @Test
    void balanceIntervalAboveTheRenewIntervalIsRejected() {
        assertThatIllegalArgumentException()
                .isThrownBy(
                        () ->
                                PartitionedElectionConfig.builder("orders", 4)
                                        .ttl(Duration.ofSeconds(3))
                                        .balanceInterval(Duration.ofSeconds(2))
                                        .build())
                .withMessage(
                        "redlease: balanceInterval must be at least 1ms and at most the renew"
                                + " interval (1000ms); got 2000ms");
    }

    @Test
    void negativeSettleIsRejected() {
        assertThatIllegalArgumentException()
                .isThrownBy(
                        () ->
                                PartitionedElectionConfig.builder("orders", 4)
                                        .settle(Duration.ofSeconds(-1))
                                        .build())
                .withMessage("redlease: settle must not be negative");
    }

    @Test
    void electorRulesStillApply() {
        assertThatIllegalArgumentException()
                .isThrownBy(
                        () ->
                                PartitionedElectionConfig.builder("orders", 4)
                                        .ttl(Duration.ofMillis(50))
                                        .build())
                .withMessage("redlease: TTL must be at least 100ms");
    }
}
