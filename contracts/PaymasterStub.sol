// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {PackedUserOperation} from "./UserOperation.sol";

interface IEntryPointDeposits {
    function depositTo(address account) external payable;
    function balanceOf(address account) external view returns (uint256);
}

/// @notice A paymaster that sponsors everything: what matters to the platform is its deposit in
/// the EntryPoint, which pays the gas (its own ether balance does not).
contract PaymasterStub {
    IEntryPointDeposits public immutable entryPoint;

    constructor(IEntryPointDeposits entryPoint_) {
        entryPoint = entryPoint_;
    }

    function deposit() external payable {
        entryPoint.depositTo{value: msg.value}(address(this));
    }

    function getDeposit() external view returns (uint256) {
        return entryPoint.balanceOf(address(this));
    }

    function validatePaymasterUserOp(PackedUserOperation calldata, bytes32, uint256)
        external
        pure
        returns (bytes memory context, uint256 validationData)
    {
        return ("", 0);
    }

    receive() external payable {}
}
