/**
 * Fencing for SQL databases: every write of a Spring-managed JDBC transaction run by a leader is
 * fenced by its term's token, through a fence table stamped at commit.
 */
@NullMarked
package io.redlease.jdbc;

import org.jspecify.annotations.NullMarked;
