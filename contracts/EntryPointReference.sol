// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @notice A reference contract: configuration may name it instead of the EntryPoint itself, and
/// the resolver follows `target()` to the real one.
contract EntryPointReference {
    address public immutable target;

    constructor(address target_) {
        target = target_;
    }
}
