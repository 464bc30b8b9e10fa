// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @notice An ERC-4337 v0.7 packed UserOperation, as `handleOps` takes it.
struct PackedUserOperation {
    address sender;
    uint256 nonce;
    bytes initCode;
    bytes callData;
    /// verificationGasLimit (high 128 bits) ‖ callGasLimit (low 128 bits)
    bytes32 accountGasLimits;
    uint256 preVerificationGas;
    /// maxPriorityFeePerGas (high 128 bits) ‖ maxFeePerGas (low 128 bits)
    bytes32 gasFees;
    /// paymaster (20 bytes) ‖ paymasterVerificationGasLimit (16) ‖ paymasterPostOpGasLimit (16) ‖ data
    bytes paymasterAndData;
    bytes signature;
}

/// @notice The account side of ERC-4337 validation.
interface IAccount {
    function validateUserOp(PackedUserOperation calldata userOp, bytes32 userOpHash, uint256 missingAccountFunds)
        external
        returns (uint256 validationData);
}

/// @notice The paymaster side of ERC-4337 validation.
interface IPaymaster {
    function validatePaymasterUserOp(PackedUserOperation calldata userOp, bytes32 userOpHash, uint256 maxCost)
        external
        returns (bytes memory context, uint256 validationData);
}
