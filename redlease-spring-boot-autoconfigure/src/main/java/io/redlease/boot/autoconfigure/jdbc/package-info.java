/** Auto-configuration of fenced JDBC transactions ({@code redlease-jdbc}). */
@NullMarked
package io.redlease.boot.autoconfigure.jdbc;

import org.jspecify.annotations.NullMarked;
