// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {PackedUserOperation} from "./UserOperation.sol";

/// @notice A minimal ERC-4337 smart account: one owner key signs the UserOperation hash (EIP-191),
/// the EntryPoint (or the owner) may make it call anything.
contract SimpleAccount {
    address public immutable owner;
    address public immutable entryPoint;

    error NotAllowed(address caller);

    constructor(address entryPoint_, address owner_) {
        entryPoint = entryPoint_;
        owner = owner_;
    }

    /// @return validationData 0 when the owner signed `userOpHash`, 1 (SIG_VALIDATION_FAILED) otherwise.
    function validateUserOp(PackedUserOperation calldata userOp, bytes32 userOpHash, uint256 missingAccountFunds)
        external
        returns (uint256 validationData)
    {
        if (msg.sender != entryPoint) revert NotAllowed(msg.sender);
        validationData = recover(userOpHash, userOp.signature) == owner ? 0 : 1;
        if (missingAccountFunds > 0) {
            // The EntryPoint credits what it receives to this account's deposit; a shortfall fails there.
            (bool paid,) = payable(entryPoint).call{value: missingAccountFunds}("");
            paid;
        }
    }

    function execute(address dest, uint256 value, bytes calldata func) external {
        if (msg.sender != entryPoint && msg.sender != owner) revert NotAllowed(msg.sender);
        (bool ok, bytes memory result) = dest.call{value: value}(func);
        if (!ok) {
            assembly {
                revert(add(result, 32), mload(result))
            }
        }
    }

    function recover(bytes32 hash, bytes calldata signature) private pure returns (address) {
        if (signature.length != 65) return address(0);
        bytes32 digest = keccak256(abi.encodePacked("\x19Ethereum Signed Message:\n32", hash));
        return ecrecover(digest, uint8(signature[64]), bytes32(signature[0:32]), bytes32(signature[32:64]));
    }

    receive() external payable {}
}
