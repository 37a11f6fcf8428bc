package io.redlease.core.partition;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class BalancerTests {

    private static List<String> members(int count) {
        List<String> members = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            members.add("m" + (char) ('a' + i));
        }
        return members;
    }

    @Test
    void sharesAddUpToThePartitionCountAndDifferByAtMostOne() {
        for (int partitions = 1; partitions <= 40; partitions++) {
            for (int count = 1; count <= 12; count++) {
                List<String> members = members(count);
                int sum = 0;
                int min = Integer.MAX_VALUE;
                int max = 0;
                for (String member : members) {
                    int share = Balancer.share(partitions, members, member);
                    sum += share;
                    min = Math.min(min, share);
                    max = Math.max(max, share);
                }
                assertThat(sum)
                        .as("%d partitions over %d", partitions, count)
                        .isEqualTo(partitions);
                assertThat(max - min).isLessThanOrEqualTo(1);
            }
        }
    }

    @Test
    void theFirstMembersInIdOrderTakeTheRemainder() {
        List<String> members = List.of("a", "b", "c");
        assertThat(Balancer.share(10, members, "a")).isEqualTo(4);
        assertThat(Balancer.share(10, members, "b")).isEqualTo(3);
        assertThat(Balancer.share(10, members, "c")).isEqualTo(3);
    }

    @Test
    void aJoinLowersNoShareBeyondWhatTheNewcomerTakesAndRaisesNone() {
        for (int partitions = 1; partitions <= 64; partitions++) {
            for (int count = 1; count <= 8; count++) {
                List<String> before = members(count);
                for (int position = 0; position <= count; position++) {
                    List<String> after = new ArrayList<>(before);
                    String newcomer = before.isEmpty() ? "x" : "m" + (char) ('a' + position) + "0";
                    after.add(newcomer);
                    after.sort(null);
                    int moved = 0;
                    for (String member : before) {
                        int was = Balancer.share(partitions, before, member);
                        int now = Balancer.share(partitions, after, member);
                        assertThat(now).isLessThanOrEqualTo(was);
                        moved += was - now;
                    }
                    assertThat(moved).isEqualTo(Balancer.share(partitions, after, newcomer));
                }
            }
        }
    }

    @Test
    void aLeaveLowersNoShare() {
        for (int partitions = 1; partitions <= 64; partitions++) {
            for (int count = 2; count <= 8; count++) {
                List<String> before = members(count);
                for (String leaver : before) {
                    List<String> after = new ArrayList<>(before);
                    after.remove(leaver);
                    for (String member : after) {
                        assertThat(Balancer.share(partitions, after, member))
                                .isGreaterThanOrEqualTo(Balancer.share(partitions, before, member));
                    }
                }
            }
        }
    }
}
