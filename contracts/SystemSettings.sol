// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @notice An organisation's system settings on one chain: owner-only key/value settings, each
/// change an event the Ledger Index reads. Deployed by CREATE2, so the constructor's msg.sender
/// is the deployer contract: the owner is an argument.
contract SystemSettings {
    address public immutable owner;

    mapping(bytes32 => bytes32) public settings;

    event SettingChanged(bytes32 indexed key, bytes32 value);

    error NotOwner();
    error ZeroOwner();

    constructor(address owner_) {
        if (owner_ == address(0)) revert ZeroOwner();
        owner = owner_;
    }

    function set(bytes32 key, bytes32 value) external {
        if (msg.sender != owner) revert NotOwner();
        settings[key] = value;
        emit SettingChanged(key, value);
    }
}
