// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @notice The deposit and nonce surface of an ERC-4337 EntryPoint (v0.7 signatures): paymasters
/// and accounts prepay gas here, and `balanceOf` is what a funding wait reads. `handleOps` is not
/// implemented; `emitUserOperationEvent` lets tests produce the event a bundle would emit.
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

    error InsufficientDeposit(uint256 available, uint256 required);

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

    receive() external payable {
        depositTo(msg.sender);
    }
}
