package io.redlease.boot.autoconfigure;

import io.redlease.core.Elections;
import io.redlease.core.Elector;
import io.redlease.core.partition.PartitionedElection;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/**
 * Refuses, at startup, two elections whose Redis keys would coincide: two ordinary elections on one
 * name, two partitioned elections on one name, or an ordinary election named like one partition of
 * a partitioned election ({@code {<name>:p<i>}}). Such elections would take each other's lease for
 * their own and hold terms of the same keys at once.
 */
final class ElectionNames {

    private ElectionNames() {}

    /**
     * Checks the names of the elections about to be registered.
     *
     * @param electors the ordinary elections by id, the main one under {@link Elections#DEFAULT}
     * @param partitioned the partitioned elections by id
     * @throws InvalidConfigurationPropertyValueException naming the property of the second election
     *     of a clash and the property of the first
     */
    static void check(Map<String, Elector> electors, Map<String, PartitionedElection> partitioned) {
        Map<String, String> ordinary = new LinkedHashMap<>();
        electors.forEach((id, elector) -> unique(ordinary, electionProperty(id), elector.name()));
        Map<String, String> partitionedNames = new LinkedHashMap<>();
        partitioned.forEach(
                (id, election) ->
                        unique(partitionedNames, partitionsProperty(id), election.name()));
        ordinary.forEach(
                (name, property) ->
                        partitionedNames.forEach(
                                (partitionedName, partitionedProperty) -> {
                                    if (isPartitionOf(name, partitionedName)) {
                                        throw clash(
                                                property,
                                                name,
                                                "The name is that of a partition of "
                                                        + partitionedProperty
                                                        + " ('"
                                                        + partitionedName
                                                        + "'), whose keys it would share");
                                    }
                                }));
    }

    private static void unique(Map<String, String> seen, String property, String name) {
        String first = seen.putIfAbsent(name, property);
        if (first != null) {
            throw clash(
                    property,
                    name,
                    "The name is also that of "
                            + first
                            + "; two elections on one name share every Redis key");
        }
    }

    /** Returns whether {@code name} is {@code {<partitioned>:p<i>}} for some partition i. */
    private static boolean isPartitionOf(String name, String partitioned) {
        String prefix = "{" + partitioned + ":p";
        if (!name.startsWith(prefix) || !name.endsWith("}")) {
            return false;
        }
        String index = name.substring(prefix.length(), name.length() - 1);
        return !index.isEmpty() && index.chars().allMatch(Character::isDigit);
    }

    private static InvalidConfigurationPropertyValueException clash(
            String property, String name, String rule) {
        return new InvalidConfigurationPropertyValueException(
                property, name, rule + ". Give each election a name of its own.");
    }

    private static String electionProperty(String id) {
        return Elections.DEFAULT.equals(id)
                ? "redlease.name"
                : "redlease.elections." + id + ".name";
    }

    private static String partitionsProperty(String id) {
        return "redlease.partitions." + id + ".name";
    }
}
