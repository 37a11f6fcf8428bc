package io.redlease.samples.jdbc;

import org.springframework.data.jpa.repository.JpaRepository;

/** The accounts. */
public interface Accounts extends JpaRepository<Account, String> {}
