package io.redlease.boot.health;

import io.redlease.boot.lifecycle.LeaderLifecycles;
import io.redlease.boot.lifecycle.LeaderLifecycles.Member;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/** Adds an election's leader-only lifecycles, and whether each runs, to its health details. */
final class LifecycleDetails {

    private LifecycleDetails() {}

    static void put(
            @Nullable LeaderLifecycles lifecycles, String electionId, Map<String, Object> details) {
        if (lifecycles == null) {
            return;
        }
        List<Member> members = lifecycles.members().get(electionId);
        if (members == null || members.isEmpty()) {
            return;
        }
        Map<String, Object> running = new LinkedHashMap<>();
        members.forEach(member -> running.put(member.name(), member.running()));
        details.put("lifecycles", running);
    }
}
