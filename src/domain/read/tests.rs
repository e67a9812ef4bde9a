//! Scenario tests
