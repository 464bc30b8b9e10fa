// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IAccount, IPaymaster, PackedUserOperation} from "./UserOperation.sol";

/// @notice An ERC-4337 EntryPoint (v0.7 signatures and hashing) reduced to what the platform uses:
/// deposits (paymasters and accounts prepay gas here; `balanceOf` is what a funding wait reads),
/// 2D nonces, `getUserOpHash`, and `handleOps`: validate (account signature, payer deposit,
/// paymaster), execute, charge the actual gas to the payer's deposit and pay it to the bundler's
/// beneficiary. No initCode (accounts are deployed beforehand), no aggregators, no postOp, no
/// time-range validation data. `emitUserOperationEvent` lets tests produce the event directly.
contract EntryPointDeposits {
    mapping(address => uint256) private deposits;
    mapping(address => mapping(uint192 => uint256)) public nonceSequenceNumber;

    event Deposited(address indexed account, uint256 totalDeposit);
    event Withdrawn(address indexed account, address withdrawAddress, uint256 amount);
    event UserOperationEvent(
        bytes32 indexed userOpHash,
        address indexed sender,
        address indexed paymaster,
        uint256 nonce,
        bool success,
        uint256 actualGasCost,
        uint256 actualGasUsed
    );

    event UserOperationRevertReason(
        bytes32 indexed userOpHash, address indexed sender, uint256 nonce, bytes revertReason
    );

    error InsufficientDeposit(uint256 available, uint256 required);
    /// Same shape as the reference EntryPoint's: `reason` starts with its AAnn code.
    error FailedOp(uint256 opIndex, string reason);

    /// What `handleOps` works out of one operation before running it.
    struct OpInfo {
        bytes32 userOpHash;
        address paymaster;
        uint256 verificationGasLimit;
        uint256 callGasLimit;
        uint256 paymasterVerificationGasLimit;
        uint256 maxFeePerGas;
        uint256 maxPriorityFeePerGas;
        uint256 prefund;
    }

    function balanceOf(address account) external view returns (uint256) {
        return deposits[account];
    }

    function depositTo(address account) public payable {
        uint256 total = deposits[account] + msg.value;
        deposits[account] = total;
        emit Deposited(account, total);
    }

    function withdrawTo(address payable withdrawAddress, uint256 amount) external {
        uint256 available = deposits[msg.sender];
        if (available < amount) revert InsufficientDeposit(available, amount);
        deposits[msg.sender] = available - amount;
        emit Withdrawn(msg.sender, withdrawAddress, amount);
        (bool ok,) = withdrawAddress.call{value: amount}("");
        require(ok, "withdraw failed");
    }

    function getNonce(address sender, uint192 key) external view returns (uint256) {
        return nonceSequenceNumber[sender][key] | (uint256(key) << 64);
    }

    function emitUserOperationEvent(
        bytes32 userOpHash,
        address sender,
        address paymaster,
        uint256 nonce,
        bool success,
        uint256 actualGasCost,
        uint256 actualGasUsed
    ) external {
        emit UserOperationEvent(userOpHash, sender, paymaster, nonce, success, actualGasCost, actualGasUsed);
    }

    function getUserOpHash(PackedUserOperation calldata op) public view returns (bytes32) {
        bytes32 packed = keccak256(
            abi.encode(
                op.sender,
                op.nonce,
                keccak256(op.initCode),
                keccak256(op.callData),
                op.accountGasLimits,
                op.preVerificationGas,
                op.gasFees,
                keccak256(op.paymasterAndData)
            )
        );
        return keccak256(abi.encode(packed, address(this), block.chainid));
    }

    function handleOps(PackedUserOperation[] calldata ops, address payable beneficiary) external {
        uint256 collected;
        for (uint256 i = 0; i < ops.length; i++) {
            collected += handleOp(i, ops[i]);
        }
        (bool ok,) = beneficiary.call{value: collected}("");
        require(ok, "AA91 failed send to beneficiary");
    }

    function handleOp(uint256 i, PackedUserOperation calldata op) private returns (uint256 actualGasCost) {
        uint256 preGas = gasleft();
        OpInfo memory info = opInfo(i, op);
        useNonce(i, op.sender, op.nonce);
        validate(i, op, info);
        // Like the reference EntryPoint: too little gas left for the call is the bundler's fault, so the
        // bundle reverts (and gas estimation finds enough) instead of the operation failing.
        if ((gasleft() * 63) / 64 < info.callGasLimit + 10_000) revert FailedOp(i, "AA95 out of gas");
        (bool success, bytes memory result) = op.sender.call{gas: info.callGasLimit}(op.callData);
        if (!success) emit UserOperationRevertReason(info.userOpHash, op.sender, op.nonce, result);
        uint256 gasPrice = info.maxFeePerGas;
        if (info.maxPriorityFeePerGas + block.basefee < gasPrice) gasPrice = info.maxPriorityFeePerGas + block.basefee;
        uint256 actualGas = preGas - gasleft() + op.preVerificationGas;
        actualGasCost = actualGas * gasPrice;
        if (actualGasCost > info.prefund) actualGasCost = info.prefund;
        deposits[info.paymaster == address(0) ? op.sender : info.paymaster] += info.prefund - actualGasCost;
        emit UserOperationEvent(
            info.userOpHash, op.sender, info.paymaster, op.nonce, success, actualGasCost, actualGas
        );
    }

    function opInfo(uint256 i, PackedUserOperation calldata op) private view returns (OpInfo memory info) {
        info.userOpHash = getUserOpHash(op);
        info.verificationGasLimit = uint128(bytes16(op.accountGasLimits));
        info.callGasLimit = uint128(uint256(op.accountGasLimits));
        info.maxPriorityFeePerGas = uint128(bytes16(op.gasFees));
        info.maxFeePerGas = uint128(uint256(op.gasFees));
        uint256 postOpGasLimit;
        if (op.paymasterAndData.length >= 52) {
            info.paymaster = address(bytes20(op.paymasterAndData[0:20]));
            info.paymasterVerificationGasLimit = uint128(bytes16(op.paymasterAndData[20:36]));
            postOpGasLimit = uint128(bytes16(op.paymasterAndData[36:52]));
        } else if (op.paymasterAndData.length != 0) {
            revert FailedOp(i, "AA93 invalid paymasterAndData");
        }
        info.prefund = (
            info.verificationGasLimit + info.callGasLimit + info.paymasterVerificationGasLimit + postOpGasLimit
                + op.preVerificationGas
        ) * info.maxFeePerGas;
    }

    function useNonce(uint256 i, address sender, uint256 nonce) private {
        uint192 key = uint192(nonce >> 64);
        if (nonceSequenceNumber[sender][key]++ != uint64(nonce)) revert FailedOp(i, "AA25 invalid account nonce");
    }

    /// The account's signature, then the payer's deposit (the paymaster's, else the account's, which
    /// the account tops up by `missingAccountFunds`), then the paymaster's consent; the prefund is
    /// taken from the payer's deposit and the unused part returned after execution.
    function validate(uint256 i, PackedUserOperation calldata op, OpInfo memory info) private {
        address payer = info.paymaster == address(0) ? op.sender : info.paymaster;
        uint256 missing;
        if (payer == op.sender && deposits[payer] < info.prefund) missing = info.prefund - deposits[payer];
        try IAccount(op.sender).validateUserOp{gas: info.verificationGasLimit}(op, info.userOpHash, missing) returns (
            uint256 validationData
        ) {
            if (validationData != 0) revert FailedOp(i, "AA24 signature error");
        } catch {
            revert FailedOp(i, "AA23 reverted");
        }
        uint256 available = deposits[payer];
        if (available < info.prefund) {
            revert FailedOp(i, payer == op.sender ? "AA21 didn't pay prefund" : "AA31 paymaster deposit too low");
        }
        deposits[payer] = available - info.prefund;
        if (info.paymaster == address(0)) return;
        try IPaymaster(info.paymaster).validatePaymasterUserOp{gas: info.paymasterVerificationGasLimit}(
            op, info.userOpHash, info.prefund
        ) returns (bytes memory, uint256 validationData) {
            if (validationData != 0) revert FailedOp(i, "AA34 signature error");
        } catch {
            revert FailedOp(i, "AA33 reverted");
        }
    }

    receive() external payable {
        depositTo(msg.sender);
    }
}
